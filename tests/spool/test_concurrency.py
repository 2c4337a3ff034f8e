"""Many writers at once: every record reads back whole, none lost, none interleaved.

Claude Code and Codex run matching hooks concurrently, so one run's spool takes appends
from many processes at the same moment.
"""

from __future__ import annotations

import os
import subprocess
import sys

from agentspool.spool.read import SpoolReader

WRITERS = 64
RECORDS = 1000

# Each writer appends through the real write path (frame + append, one write(2) each),
# with payload sizes that cross the pipe/page sizes (4 KiB) so big and small records mix.
_WRITER = f"""
import sys
from agentspool.spool import write
run_dir, writer = sys.argv[1], int(sys.argv[2])
fd = write.open_run_dir(run_dir)
for i in range({RECORDS}):
    body = b"%d:%d:" % (writer, i)
    payload = body + b"." * ((writer * 7919 + i * 104729) % 9000)
    record = write.frame("PostToolUse", payload, len(payload), -1, 0, writer)
    write.append(fd, write.EVENTS_FILE, record)
"""


def test_64_writers_1000_records_each(claude_run):
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, claude_run.run_dir, str(w)])
        for w in range(WRITERS)
    ]
    assert [p.wait() for p in procs] == [0] * WRITERS
    reader = SpoolReader(claude_run.run_dir)
    records = reader.read()
    assert reader.damaged == 0
    seen = set()
    for r in records:
        writer, i, rest = r.payload.split(b":", 2)
        assert rest == b"." * ((int(writer) * 7919 + int(i) * 104729) % 9000)
        assert int(writer) == r.pid
        seen.add((int(writer), int(i)))
    assert len(records) == WRITERS * RECORDS
    assert seen == {(w, i) for w in range(WRITERS) for i in range(RECORDS)}
    # each writer's records appear in the order it wrote them
    for w in range(WRITERS):
        mine = [int(r.payload.split(b":", 2)[1]) for r in records if r.pid == w]
        assert mine == list(range(RECORDS))


def test_hundreds_of_real_hook_processes_at_once(claude_run, silent):
    """400 hook processes spawned from the rendered command, all running concurrently."""
    count = 400
    argv = claude_run.argv("PostToolUse")
    procs = []
    for _ in range(count):
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd="/",
            env={},
        )
        procs.append(proc)
    # Fill every pipe first (each payload fits a pipe buffer), then close them all in
    # one sweep: the hooks finish their reads, and so their writes, at the same time.
    for n, proc in enumerate(procs):
        assert proc.stdin is not None
        proc.stdin.write(b'{"n":%d,"pad":"%s"}' % (n, b"q" * (n * 37 % 20000)))
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()
    results = []
    for proc in procs:
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
        proc.wait(timeout=120)
        results.append(subprocess.CompletedProcess(argv, proc.returncode, out, err))
    for result in results:
        silent(result)
    reader = SpoolReader(claude_run.run_dir)
    records = reader.read()
    assert reader.damaged == 0
    assert sorted(r.payload for r in records) == sorted(
        b'{"n":%d,"pad":"%s"}' % (n, b"q" * (n * 37 % 20000)) for n in range(count)
    )
    assert len({r.pid for r in records}) == count
    assert os.path.exists(os.path.join(claude_run.run_dir, "hooks.log")) is False
