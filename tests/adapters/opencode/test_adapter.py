"""Arming a run (``setup``), arming every run (``install``), the server of a run started
with ``--port``, and the end of a run whose process is gone."""

from __future__ import annotations

import base64
import json
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from harness import opencode_captures as captures

import agentspool
from agentspool.adapters.opencode import OpenCode, _store
from agentspool.adapters.opencode._install import plugin_path
from agentspool.adapters.opencode._kit import SESSION, Kit
from agentspool.adapters.opencode._lifecycle import plugin_source
from agentspool.core import proc
from agentspool.errors import SettingsError, UnsupportedError
from agentspool.spool.write import append_record

# ---------------------------------------------------------------------- setup ---


def test_setup_arms_the_run_through_the_config_environment(
    runtime_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENCODE_CONFIG_CONTENT", raising=False)
    monkeypatch.delenv("OPENCODE_SERVER_PASSWORD", raising=False)
    spawn = agentspool.setup("opencode", "run-9", runtime_dir)
    assert spawn.args == []
    plugin = os.path.join(spawn.run_dir, "agentspool-opencode.js")
    assert spawn.settings_path == plugin
    assert json.loads(spawn.env["OPENCODE_CONFIG_CONTENT"]) == {"plugin": [f"file://{plugin}"]}
    assert spawn.env["AGENTSPOOL_RUN_ID"] == "run-9"
    assert spawn.env["AGENTSPOOL_RUNTIME_DIR"] == runtime_dir
    text = Path(plugin).read_text()
    armed = json.dumps({"runtimeDir": runtime_dir, "runId": "run-9"}).replace(" ", "")
    assert f"const ARMED = {armed};" in text
    assert "const ARMED = null;" not in text
    secret = Path(spawn.run_dir, "opencode-server-password").read_text().strip()
    assert secret == spawn.env["OPENCODE_SERVER_PASSWORD"] and len(secret) >= 24
    for path in (plugin, os.path.join(spawn.run_dir, "opencode-server-password")):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = agentspool.setup("opencode", "run-10", runtime_dir)
    assert again.env["OPENCODE_SERVER_PASSWORD"] != secret


def test_setup_merges_the_config_the_spawn_would_pass_on(
    runtime_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = {"model": "x/y", "plugin": ["their-plugin@1.0"]}
    monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", json.dumps(theirs))
    monkeypatch.setenv("OPENCODE_SERVER_PASSWORD", "their-secret")
    spawn = agentspool.setup("opencode", "run-9", runtime_dir)
    config = json.loads(spawn.env["OPENCODE_CONFIG_CONTENT"])
    assert config == {**theirs, "plugin": ["their-plugin@1.0", f"file://{spawn.settings_path}"]}
    assert spawn.env["OPENCODE_SERVER_PASSWORD"] == "their-secret"
    monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", "{not json")
    with pytest.raises(SettingsError, match="OPENCODE_CONFIG_CONTENT"):
        agentspool.setup("opencode", "run-11", runtime_dir)
    with pytest.raises(UnsupportedError):
        agentspool.setup("opencode", "run-12", runtime_dir, trust="config")


# -------------------------------------------------------------------- install ---


def test_install_adds_one_plugin_file_and_uninstall_takes_it_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    target = tmp_path / "config" / "opencode" / "plugins" / "agentspool-opencode.js"
    assert plugin_path("user", None) == str(target)
    report = agentspool.install("opencode")
    assert [(f.path, f.action, f.backup) for f in report.files] == [(str(target), "created", "")]
    assert target.read_text() == plugin_source()
    assert "const ARMED = null;" in target.read_text()
    assert agentspool.install("opencode").files[0].action == "unchanged"
    target.write_text(plugin_source().replace("KEPT", "OLD_KEPT"))  # an older version
    assert agentspool.install("opencode").files[0].action == "updated"
    assert target.read_text() == plugin_source()
    assert agentspool.uninstall("opencode").files[0].action == "removed"
    assert not target.exists()
    assert agentspool.uninstall("opencode").files[0].action == "absent"  # nothing there
    project = tmp_path / "project"
    report = agentspool.install("opencode", "project", directory=str(project))
    assert report.files[0].path == str(project / ".opencode/plugins/agentspool-opencode.js")


def test_a_file_of_that_name_that_is_not_ours_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    target = Path(plugin_path("user", None))
    target.parent.mkdir(parents=True)
    target.write_text("export const Mine = async () => ({});\n")
    for act in (agentspool.install, agentspool.uninstall):
        with pytest.raises(SettingsError, match="not agentspool's plugin"):
            act("opencode")
    assert target.read_text() == "export const Mine = async () => ({});\n"


def test_cli_lists_opencode_and_installs_it(tmp_path: Path, runtime_dir: str) -> None:
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path),
        "AGENTSPOOL_RUNTIME_DIR": runtime_dir,
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agentspool.cli.main", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    for command in ("--help", "setup", "install", "uninstall", "run", "read", "watch"):
        proc = cli(*dict.fromkeys((command, "--help")))
        assert proc.returncode == 0 and "opencode" in proc.stdout, (command, proc.stdout)
    proc = cli("install", "opencode", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"][0]["action"] == "created"
    proc = cli("setup", "opencode", "--run-id", "r1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "OPENCODE_CONFIG_CONTENT" in json.loads(proc.stdout)["env"]
    proc = cli("ls", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [(r["provider"], r["run_id"]) for r in json.loads(proc.stdout)] == [("opencode", "r1")]


# --------------------------------------------------------------------- server ---

_PERMISSION = next(p for p in captures.capture_dirs() if p.name.startswith("tui_permission"))


def _open_permission() -> list[dict[str, Any]]:
    """What the real server answered to GET /permission with the prompt open."""
    with open(_PERMISSION / "server.jsonl") as fh:
        answers = [json.loads(line) for line in fh]
    return next(
        a["body"]
        for a in answers
        if a["checkpoint"] == "permission open" and a["path"] == "/permission"
    )


class _Server(ThreadingHTTPServer):
    answers: dict[str, Any]
    password: str


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *_: object) -> None:
        pass

    def do_GET(self) -> None:
        token = base64.b64encode(f"opencode:{self.server.password}".encode()).decode()
        if self.headers.get("Authorization") != f"Basic {token}":
            self.send_response(401)
            self.end_headers()
            return
        body = json.dumps(self.server.answers.get(self.path, [])).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.answers, srv.password = {}, "s3cret"
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def agent() -> Iterator[subprocess.Popen[bytes]]:
    """A stand-in for the opencode process: alive, started with ``--port``."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "--port", "1"])
    try:
        yield child
    finally:
        child.kill()
        child.wait()


def _armed(tmp_path: Path, runtime_dir: str, pid: int, url: str) -> tuple[OpenCode, str]:
    """A kit session whose turn waits on ``call_approve`` (the store shows it running),
    and the run's plugin records naming process ``pid`` and server ``url``."""
    kit = Kit()
    path = kit.transcript(str(tmp_path), 1)
    database = _store.split(path)[0]
    spawn = agentspool.setup("opencode", "run-1", runtime_dir)
    Path(spawn.run_dir, "opencode-server-password").write_text("s3cret\n")
    found = proc.stat(pid)
    start = {
        "pid": pid,
        "start": found.started if found else 0,
        "directory": "/work",
        "serverUrl": url,
        "database": database,
    }
    append_record(spawn.run_dir, "start", json.dumps(start).encode(), agent_pid=pid)
    for event, payload in [
        ("session_status", {"sessionID": SESSION, "status": {"type": "busy"}}),
        (
            "permission_asked",
            {
                "id": "per_1",
                "sessionID": SESSION,
                "permission": "bash",
                "metadata": {"command": "touch approved.txt"},
                "tool": {"messageID": "msg_x", "callID": "call_approve"},
            },
        ),
    ]:
        append_record(spawn.run_dir, event, json.dumps(payload).encode(), agent_pid=pid)
    return OpenCode(), path


def test_the_server_of_a_run_started_with_a_port_says_what_waits_now(
    tmp_path: Path,
    runtime_dir: str,
    server: _Server,
    agent: subprocess.Popen[bytes],
) -> None:
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    answer = _open_permission()
    for asked in answer:
        asked["sessionID"] = SESSION
    server.answers["/permission"] = answer
    adapter, path = _armed(tmp_path, runtime_dir, agent.pid, url)
    chat = adapter.read_chat("run-1", runtime_dir, path)
    assert chat.state == "needs_input" and chat.process == "alive"
    assert chat.evidence[0].source == "server:permission"
    assert chat.pending_approval is not None
    assert chat.pending_approval.tool_use_id == "call_approve"
    # Answered while the spool missed the reply: the server lists nothing, nothing waits.
    server.answers["/permission"] = []
    chat = adapter.read_chat("run-1", runtime_dir, path)
    assert (chat.pending_approval, chat.evidence[0].source) == (None, "server:permission")
    # Without the run's password the server answers 401: the spool's word stands.
    server.password = "other"
    chat = adapter.read_chat("run-1", runtime_dir, path)
    assert chat.pending_approval is not None
    assert chat.evidence[0].source == "plugin:permission.asked"


def test_a_run_started_without_a_port_is_never_asked(
    tmp_path: Path, runtime_dir: str, server: _Server
) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        adapter, path = _armed(tmp_path, runtime_dir, child.pid, url)
        server.answers["/permission"] = []
        chat = adapter.read_chat("run-1", runtime_dir, path)
        assert chat.evidence[0].source == "plugin:permission.asked"
    finally:
        child.kill()
        child.wait()


# ----------------------------------------------------------------------- end ---


def test_a_gone_process_ends_the_run(tmp_path: Path, runtime_dir: str) -> None:
    """OpenCode writes nothing when it exits or is killed: the process the plugin's
    ``start`` record names is the evidence."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    adapter, path = _armed(tmp_path, runtime_dir, child.pid, "http://localhost:4096/")
    live = adapter.read_chat("run-1", runtime_dir, path)
    assert (live.state, live.process, live.pid) == ("needs_input", "alive", child.pid)
    alive = adapter.spool_sig("run-1", runtime_dir)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    # No file of the run changed, yet the signature moves: it stats /proc/<pid> too.
    assert adapter.spool_sig("run-1", runtime_dir) != alive
    chat = agentspool.read_chat("opencode", "run-1", runtime_dir)
    assert (chat.state, chat.process, chat.activity) == ("ended", "gone", "idle")
    assert chat.pending_approval is None
    assert chat.transcript_path == path
