"""``agentspool show`` on a long session: its peak memory beside a cold read's (ADR 0027).

A conversation-heavy Claude Code transcript (``_claude_chat_gen``, ~100 MB) is shown as
text and as JSON, and read by a bare cold ``read_chat``, each in a fresh process whose
output goes to ``/dev/null``; each process reports its own peak RSS (VmHWM). Drawing the
session must cost little beyond holding its records: entries are printed as they are
drawn, the JSON is written a list item at a time.

    show (text) peak RSS / read_chat peak RSS   — target <= 1.5
    show --json peak RSS / read_chat peak RSS   — target <= 1.5

Usage: python benchmarks/show.py [--size-mb 100]. Ratios print last.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _claude_chat_gen

# Each measured process reports its own VmHWM on stderr: ru_maxrss of a child survives
# fork+exec of a larger parent, VmHWM belongs to the child's address space alone.
_PEAK = """
import os, sys
def peak():
    line = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    os.write(2, b"%d\\n" % (int(line.split()[1]) // 1024))
if sys.argv[1] == "read":
    from agentspool.adapters import registry
    registry.load("claude-code").read_chat("bench", "", sys.argv[2])
else:
    from agentspool.cli.main import main
    code = main(["show", *sys.argv[2:]])
    sys.stdout.flush()
    assert code == 0, code
peak()
"""


def peak_mb(*argv: str) -> tuple[int, float]:
    start = time.perf_counter()
    with open(os.devnull, "w") as sink:
        done = subprocess.run(
            [sys.executable, "-c", _PEAK, *argv],
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
            check=True,
        )
    return int(done.stderr.split()[-1]), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "big.jsonl")
        size = _claude_chat_gen.write(big, args.size_mb << 20)
        read, read_s = peak_mb("read", big)
        text, text_s = peak_mb("show", big)
        as_json, json_s = peak_mb("show", big, "--json")
    print(
        f"claude-code-chat: {size / 2**20:.0f} MB; peak RSS: read_chat {read} MB "
        f"({read_s:.1f}s), show {text} MB ({text_s:.1f}s), show --json {as_json} MB "
        f"({json_s:.1f}s)"
    )
    print(f"show (text) peak RSS / read_chat peak RSS: {text / read:.2f}  target <= 1.5")
    print(f"show --json peak RSS / read_chat peak RSS: {as_json / read:.2f}  target <= 1.5")


if __name__ == "__main__":
    main()
