"""Arming Pi: ``setup``'s ``-e`` extension, ``install``'s copy in Pi's extensions folder
(the byte-identical round trip), and the extension itself loaded under Node the way Pi
loads one (its default export called with the extension API, then its handlers with
Pi's events). The real Pi runs it in the captures and tests/live/test_pi_scenarios.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import agentspool
from agentspool.adapters.pi import _install
from agentspool.adapters.pi._lifecycle import EXTENSION_FILE
from agentspool.spool.errors import SettingsError
from agentspool.spool.read import SpoolReader, read_all

NODE = shutil.which("node")

# Loads the extension as Pi does (`export default function (pi)`), with a `pi` that keeps
# each handler, then calls them with the events on stdin: [name, event, {hasUI, answer}].
DRIVER = """
import fs from "node:fs";
const [file] = process.argv.slice(2);
const handlers = {};
const mod = await import("file://" + file);
mod.default({ on: (name, fn) => (handlers[name] ??= []).push(fn) });
const results = [];
for (const [name, event, ui] of JSON.parse(fs.readFileSync(0, "utf8"))) {
  const ctx = {
    hasUI: ui.hasUI,
    cwd: "/work",
    sessionManager: { getSessionId: () => "s-1", getSessionFile: () => "/pi/s-1.jsonl" },
    ui: { confirm: async () => ui.answer },
  };
  for (const fn of handlers[name] ?? []) results.push((await fn(event, ctx)) ?? null);
}
console.log(JSON.stringify({ handlers: Object.keys(handlers).sort(), results }));
"""

CALL = {"toolCallId": "call_1", "toolName": "bash", "input": {"command": "echo hi"}}
EVENTS = [
    ["session_start", {"reason": "startup"}, {"hasUI": True}],
    ["agent_start", {}, {"hasUI": True}],
    ["tool_execution_start", {**CALL, "args": CALL["input"]}, {"hasUI": True}],
    ["tool_call", CALL, {"hasUI": True, "answer": False}],
    ["tool_execution_end", {**CALL, "isError": True}, {"hasUI": True}],
    ["agent_end", {"messages": [{"role": "assistant", "stopReason": "stop"}]}, {"hasUI": True}],
    ["tool_call", CALL, {"hasUI": False}],
    ["session_shutdown", {"reason": "quit"}, {"hasUI": True}],
]


def _drive(extension: Path, events: list[Any], env: dict[str, str]) -> dict[str, Any]:
    assert NODE is not None
    driver = extension.parent / "driver.mjs"
    driver.write_text(DRIVER)
    done = subprocess.run(
        [NODE, str(driver), str(extension)],
        input=json.dumps(events),
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "HOME": str(extension.parent), **env},
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_setup_passes_the_runs_own_extension_with_e(runtime_dir: str) -> None:
    spawn = agentspool.setup("pi", "run-1", runtime_dir)
    assert spawn.args == ["-e", spawn.settings_path]
    assert spawn.settings_path == os.path.join(spawn.run_dir, EXTENSION_FILE)
    text = Path(spawn.settings_path).read_text()
    assert _install.MARK in text.split("\n", 1)[0]
    assert json.dumps({"runtimeDir": runtime_dir, "runId": "run-1"}).replace(" ", "") in text
    assert "\n// @spool-writer\n" not in text and "function frame(" in text
    assert spawn.env["AGENTSPOOL_RUN_ID"] == "run-1"


@pytest.mark.skipif(NODE is None, reason="node not installed")
def test_the_armed_extension_spools_and_asks_before_bash(runtime_dir: str) -> None:
    spawn = agentspool.setup("pi", "run-1", runtime_dir)
    out = _drive(Path(spawn.settings_path), EVENTS, {})
    # No to the dialog blocks the call; without a UI (-p) nothing is asked.
    assert out["results"][3] == {"block": True, "reason": "Blocked by user"}
    assert out["results"][6] is None
    records = read_all(spawn.run_dir)
    assert SpoolReader(spawn.run_dir).damaged == 0
    assert [r.event for r in records] == [
        "session_start",
        "agent_start",
        "tool_execution_start",
        "permission_asked",
        "permission_replied",
        "tool_execution_end",
        "agent_end",
        "session_shutdown",
    ]
    payloads = [json.loads(r.payload) for r in records]
    assert {p["sessionId"] for p in payloads} == {"s-1"}
    assert payloads[0]["sessionFile"] == "/pi/s-1.jsonl" and payloads[0]["reason"] == "startup"
    assert payloads[3]["input"] == {"command": "echo hi"}
    assert payloads[4]["answer"] == "no"
    assert payloads[6]["stopReason"] == "stop"
    assert {(r.pid, r.agent_pid) for r in records} == {(payloads[0]["pid"],) * 2}
    assert not os.path.exists(os.path.join(spawn.run_dir, "hooks.log"))


@pytest.mark.skipif(NODE is None, reason="node not installed")
def test_confirm_off_spools_but_asks_nothing(runtime_dir: str) -> None:
    spawn = agentspool.setup("pi", "run-1", runtime_dir)
    out = _drive(Path(spawn.settings_path), EVENTS, {"AGENTSPOOL_PI_CONFIRM": "off"})
    assert "tool_call" not in out["handlers"]
    assert "permission_asked" not in {r.event for r in read_all(spawn.run_dir)}


@pytest.mark.skipif(NODE is None, reason="node not installed")
def test_the_installed_copy_records_its_own_process_and_leaves_a_wrapped_run_alone(
    runtime_dir: str, tmp_path: Path
) -> None:
    report = agentspool.install("pi", "user", directory=str(tmp_path / "agent"))
    (path,) = [f.path for f in report.files]
    wrapped = _drive(Path(path), EVENTS, {"AGENTSPOOL_RUN_ID": "theirs"})
    assert wrapped["handlers"] == []  # the wrapper's own copy records it, and asks
    alone = _drive(Path(path), EVENTS[:2], {"AGENTSPOOL_RUNTIME_DIR": runtime_dir})
    assert alone["handlers"] and "tool_call" in alone["handlers"]
    (run,) = os.listdir(runtime_dir)
    assert run.startswith("pi-")
    assert [r.event for r in read_all(os.path.join(runtime_dir, run))] == [
        "session_start",
        "agent_start",
    ]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_install_and_uninstall_leave_the_agent_dir_byte_identical(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "settings.json").write_text('{"lastChangelogVersion":"0.73.1"}')
    (agent / "extensions" / "mine.ts").write_text("export default function () {}\n")
    before = _tree(agent)
    first = agentspool.install("pi", "user", directory=str(agent))
    again = agentspool.install("pi", "user", directory=str(agent))
    assert [f.action for f in first.files] == ["created"]
    assert [f.action for f in again.files] == ["unchanged"]
    assert (agent / "extensions" / EXTENSION_FILE).exists()
    assert [h.current for h in _install.INSTALLER.installed_hooks(str(agent))] == [True]
    removed = agentspool.uninstall("pi", "user", directory=str(agent))
    assert [f.action for f in removed.files] == ["removed"]
    assert _tree(agent) == before


def test_a_file_of_that_name_not_ours_is_refused_and_left(tmp_path: Path) -> None:
    target = tmp_path / "agent" / "extensions" / EXTENSION_FILE
    target.parent.mkdir(parents=True)
    target.write_text("// someone else's\n")
    with pytest.raises(SettingsError, match="not agentspool's extension"):
        agentspool.install("pi", "user", directory=str(tmp_path / "agent"))
    with pytest.raises(SettingsError, match="not agentspool's extension"):
        agentspool.uninstall("pi", "user", directory=str(tmp_path / "agent"))
    assert target.read_text() == "// someone else's\n"


def test_project_scope_is_the_projects_pi_extensions_folder(tmp_path: Path) -> None:
    report = agentspool.install("pi", "project", directory=str(tmp_path))
    assert [f.path for f in report.files] == [str(tmp_path / ".pi" / "extensions" / EXTENSION_FILE)]
