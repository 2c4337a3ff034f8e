"""The spool plugin, loaded and called the way OpenCode loads and calls it (an ES module's
exported plugin function, then its ``event`` handler per bus event), under Node: what it
appends must be whole spool records the reader takes, and it must never throw.

OpenCode runs it under its own Bun runtime; the Tier-2 scenarios cover that
(tests/live/test_opencode_scenarios.py). Here the events are the real ones a capture's
plugin recorded (tests/live/captures/opencode/)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from harness import opencode_captures as captures

import agentspool
from agentspool.adapters.opencode._lifecycle import plugin_source
from agentspool.spool.read import SpoolReader, read_all

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node not installed")

# Loads the plugin like OpenCode does and feeds it bus events ({type, properties}, from
# stdin); an
# event given twice in a row is handed over as the same object, as two handlers of one
# plugin would get it. Prints what the plugin function returned.
DRIVER = """
import fs from "node:fs";
const [file, inputJson] = process.argv.slice(2);
const eventsJson = fs.readFileSync(0, "utf8");
const mod = await import("file://" + file);
const hooks = await mod.AgentspoolSpool(JSON.parse(inputJson));
let last = null;
for (const e of JSON.parse(eventsJson)) {
  const event = e === "again" ? last : e;
  await hooks.event?.({ event });
  last = event;
}
console.log(JSON.stringify(Object.keys(hooks)));
"""

INPUT = {"directory": "/work", "worktree": "/work", "serverUrl": "http://localhost:4096/"}


def _events() -> list[dict[str, Any]]:
    """The bus events of a capture, as OpenCode handed them to the plugin."""
    capture = next(p for p in captures.capture_dirs() if p.name.startswith("tui_permission"))
    with open(capture / "spool.jsonl") as fh:
        entries = [json.loads(line) for line in fh]
    return [
        {"type": e["event"].replace("_", "."), "properties": e["payload"]}
        for e in entries
        if e["event"] != "start"
    ]


def _run(plugin: Path, events: list[Any], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    driver = plugin.parent / "driver.mjs"
    driver.write_text(DRIVER)
    assert NODE is not None
    return subprocess.run(
        [NODE, str(driver), str(plugin), json.dumps(INPUT)],
        input=json.dumps(events),
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "HOME": str(plugin.parent), **env},
        timeout=60,
        check=False,
    )


def test_armed_plugin_appends_the_kept_events_as_spool_records(
    runtime_dir: str, tmp_path: Path
) -> None:
    spawn = agentspool.setup("opencode", "run-1", runtime_dir)
    plugin = Path(spawn.settings_path)
    events = _events()
    noise = {"type": "message.part.delta", "properties": {"delta": "x"}}
    proc = _run(plugin, [events[0], "again", noise, *events[1:]], {})
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout) == ["event"]
    records = read_all(spawn.run_dir)
    assert SpoolReader(spawn.run_dir).damaged == 0
    assert [r.event for r in records] == ["start"] + [e["type"].replace(".", "_") for e in events]
    assert [json.loads(r.payload) for r in records[1:]] == [e["properties"] for e in events]
    start = json.loads(records[0].payload)
    assert start["directory"] == "/work" and start["serverUrl"] == INPUT["serverUrl"]
    assert start["database"] == str(plugin.parent / ".local/share/opencode/opencode.db")
    pids = {(r.pid, r.agent_pid) for r in records}
    assert len(pids) == 1 and next(iter(pids))[0] == next(iter(pids))[1] == start["pid"]
    assert stat.S_IMODE(os.stat(os.path.join(spawn.run_dir, "events.spool")).st_mode) == 0o600
    assert not os.path.exists(os.path.join(spawn.run_dir, "hooks.log"))


def test_a_huge_payload_is_cut_to_head_and_tail_like_a_hook_cuts_it(runtime_dir: str) -> None:
    spawn = agentspool.setup("opencode", "run-1", runtime_dir)
    asked = {
        "type": "permission.asked",
        "properties": {
            "id": "per_1",
            "sessionID": "ses_1",
            "permission": "edit",
            "metadata": {"diff": "+" * 200_000},
            "tool": {"messageID": "msg_1", "callID": "call_big"},
        },
    }
    proc = _run(Path(spawn.settings_path), [asked], {})
    assert proc.returncode == 0, proc.stderr
    (record,) = [r for r in read_all(spawn.run_dir) if r.event == "permission_asked"]
    assert record.truncated and record.head_bytes == 48 * 1024
    assert len(record.payload) == 64 * 1024 and record.orig_len > 200_000
    assert record.payload.endswith(b'"callID":"call_big"}}')


def test_installed_plugin_names_the_run_after_the_process(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    plugin = tmp_path / "plugins" / "agentspool-opencode.js"
    plugin.parent.mkdir()
    plugin.write_text(plugin_source())
    proc = _run(plugin, _events()[:2], {"AGENTSPOOL_RUNTIME_DIR": str(runtime)})
    assert proc.returncode == 0, proc.stderr
    (run,) = os.listdir(runtime)
    provider, pid, ticks = run.split("-")
    assert provider == "opencode" and pid.isdigit() and ticks.isdigit()
    assert stat.S_IMODE(os.stat(runtime / run).st_mode) == 0o700
    records = read_all(str(runtime / run))
    assert [r.event for r in records][:2] == ["start", "session_created"]
    assert json.loads(records[0].payload)["start"] == int(ticks)


def test_installed_plugin_leaves_a_wrapped_run_to_the_wrapper(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    plugin = tmp_path / "agentspool-opencode.js"
    plugin.write_text(plugin_source())
    env = {"AGENTSPOOL_RUNTIME_DIR": str(runtime), "AGENTSPOOL_RUN_ID": "wrapped"}
    proc = _run(plugin, _events(), env)
    assert (proc.returncode, proc.stdout.strip()) == (0, "[]")
    assert not runtime.exists()


def test_a_run_dir_others_can_enter_is_refused_and_nothing_throws(
    runtime_dir: str, tmp_path: Path
) -> None:
    spawn = agentspool.setup("opencode", "run-1", runtime_dir)
    kept = Path(shutil.copy(spawn.settings_path, tmp_path / "agentspool-opencode.js"))
    os.chmod(spawn.run_dir, 0o755)
    proc = _run(kept, _events(), {})
    assert (proc.returncode, proc.stderr) == (0, "")
    assert not os.path.exists(os.path.join(spawn.run_dir, "events.spool"))
    shutil.rmtree(spawn.run_dir)  # swept: the plugin must not recreate it, nor throw
    proc = _run(kept, _events(), {})
    assert (proc.returncode, proc.stderr) == (0, "")
    assert not os.path.exists(spawn.run_dir)


# -- another account on the machine (issue 22) -------------------------------------------


def _squatted_runtime(adversary, shared_tmp: Path) -> Path:
    """``$TMPDIR/agentspool-<uid>`` made first by another account, open to everyone."""
    squatted = shared_tmp / f"agentspool-{os.getuid()}"
    adversary.sh(f"mkdir -m 0777 {squatted}")
    return squatted


def test_installed_plugin_creates_nothing_in_a_runtime_dir_another_account_made(
    adversary, shared_tmp: Path, tmp_path: Path
) -> None:
    """No ``XDG_RUNTIME_DIR``: the default runtime dir is under ``$TMPDIR``, where another
    account can make it first. The plugin makes no run dir there and notes no fault."""
    squatted = _squatted_runtime(adversary, shared_tmp)
    plugin = tmp_path / "agentspool-opencode.js"
    plugin.write_text(plugin_source())
    proc = _run(plugin, _events()[:2], {"TMPDIR": str(shared_tmp)})
    assert (proc.returncode, proc.stderr) == (0, "")
    assert os.listdir(squatted) == []


def test_a_fifo_another_account_planted_for_the_fault_log_does_not_freeze_opencode(
    adversary, shared_tmp: Path, tmp_path: Path
) -> None:
    """The account that made the runtime dir first makes the run's dir too (its name is
    the OpenCode process's pid and start time) with a FIFO as ``hooks.log``: a blocking
    open of it would hold OpenCode until someone read the FIFO."""
    squatted = _squatted_runtime(adversary, shared_tmp)
    plugin = tmp_path / "agentspool-opencode.js"
    plugin.write_text(plugin_source())
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    assert NODE is not None
    # sh waits for one line, then execs node: node keeps sh's pid and start time, so the
    # run's name is known before the plugin runs.
    proc = subprocess.Popen(
        ["sh", "-c", 'read go; exec "$@"', "sh", NODE, str(driver), str(plugin), json.dumps(INPUT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TMPDIR": str(shared_tmp)},
    )
    try:
        stat_line = Path(f"/proc/{proc.pid}/stat").read_text()
        ticks = stat_line[stat_line.rindex(")") + 2 :].split()[19]
        run_dir = squatted / f"opencode-{proc.pid}-{ticks}"
        adversary.sh(f"mkdir -m 0777 {run_dir} && mkfifo -m 0666 {run_dir}/hooks.log")
        _out, err = proc.communicate(b"go\n" + json.dumps(_events()[:2]).encode(), timeout=20)
    finally:
        proc.kill()
        proc.wait()
    assert (proc.returncode, err) == (0, b""), err
    assert sorted(os.listdir(run_dir)) == ["hooks.log"]
    assert stat.S_ISFIFO(os.lstat(run_dir / "hooks.log").st_mode)
