"""Tier-2 support: scripted model servers, private agent homes and a tmux driver.

Importable as ``harness`` because pytest puts ``tests/live`` on ``sys.path``.
"""
