# Strict editable mode: a real link tree the -S hook command can import from, and no
# import-hook .pth costing ~12 ms per interpreter start (ADR 0002). Files
# added after installing appear only after `make install` again.
PY ?= .venv/bin/python

.PHONY: install lint typecheck test test-fast bench compat all

install:
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]' --config-settings editable_mode=strict
	# `npm install`, not `npm ci`: Qwen Code 0.24.4 names optional clipboard builds for other
	# platforms at a version never published, so `npm ci` refuses the lock as out of sync;
	# `npm install` installs the lock's exact tree and skips what does not exist.
	cd tests/live && npm install --no-audit --no-fund --loglevel=error
	cd tests/live/node22 && npm ci --no-audit --no-fund --loglevel=error

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck:
	$(PY) -m mypy

test:
	$(PY) -m pytest

test-fast:
	$(PY) -m pytest -m "not live"

bench:
	$(PY) benchmarks/hooks.py
	$(PY) benchmarks/read.py
	$(PY) benchmarks/watch.py
	$(PY) benchmarks/show.py
	$(PY) benchmarks/serve.py
	$(PY) benchmarks/startup.py

# The Tier-2 scenarios against the pinned CLIs and the newest releases on npm (each
# installed into its own prefix under $$TMPDIR/agentspool-compat); prints the table.
# COMPAT_ARGS=--update-readme writes it into README.md too.
compat:
	$(PY) tests/live/compat.py $(COMPAT_ARGS)

all: lint typecheck test
