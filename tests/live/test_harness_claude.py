"""Smoke tests of the Tier-2 harness against the real ``claude`` binary.

Run::

    .venv/bin/python -m pytest -p no:cacheprovider --import-mode=importlib \\
        -o pythonpath=tests/live tests/live/test_harness_claude.py
"""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

import pytest
from harness import anthropic_server as api
from harness import claude

needs_claude = pytest.mark.skipif(not claude.available(), reason="claude binary not installed")
live = pytest.mark.live
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")

BASH_WRITE = {"command": "echo hi > out.txt", "description": "Write hi to out.txt"}


def test_server_speaks_sse_and_errors() -> None:
    """The scripted server alone (no claude): SSE shape, side requests, errors."""
    with api.AnthropicServer(
        [api.tool_use("Bash", BASH_WRITE, preface="Let me."), api.error(400, message="nope")]
    ) as srv:
        body = {
            "model": "m",
            "stream": True,
            "tools": [{"name": "Bash"}],
            "messages": [{"role": "user", "content": "hi"}],
        }

        def post(b: dict[str, object]) -> tuple[int, str]:
            req = urllib.request.Request(
                srv.url + "/v1/messages?beta=true",
                data=json.dumps(b).encode(),
                headers={"content-type": "application/json"},
                method="POST",
            )
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as e:
                with e:
                    return e.code, e.read().decode()

        # a side request (no tools) must not consume the scenario
        status, text = post({**body, "tools": []})
        assert status == 200 and "Scripted side answer." in text
        status, text = post(body)
        events = [ln[len("event: ") :] for ln in text.splitlines() if ln.startswith("event: ")]
        squeezed = [e for i, e in enumerate(events) if i == 0 or e != events[i - 1]]
        assert squeezed == [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
        assert '"stop_reason": "tool_use"' in text and "input_json_delta" in text
        status, text = post(body)
        assert status == 400 and json.loads(text)["error"]["message"] == "nope"
        status, text = post({**body, "stream": False})
        assert status == 200 and json.loads(text)["content"][0]["text"] == "OK."
        assert [r.kind for r in srv.requests] == ["side", "main", "main", "main"]


@live
@needs_claude
def test_print_mode_text_and_hooks(tmp_path: Path) -> None:
    with api.AnthropicServer([api.text("Hello from the scripted model.")]) as srv:
        h = claude.make_home(tmp_path)
        settings = claude.write_logging_hooks(h)
        r = claude.run_print(
            "say hello", home=h, server_url=srv.url, extra_args=["--settings", settings]
        )
        assert r.returncode == 0, r.stderr
        assert "Hello from the scripted model." in r.stdout
        assert len(srv.main_requests) == 1
        assert srv.main_requests[0].last_user_text().endswith("say hello")
    events = [rec["event"] for rec in h.hooks()]
    for ev in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        assert ev in events, events
    assert events.index("SessionStart") < events.index("UserPromptSubmit") < events.index("Stop")
    stop = next(rec for rec in h.hooks() if rec["event"] == "Stop")
    assert stop["payload"]["last_assistant_message"] == "Hello from the scripted model."
    assert stop["CLAUDE_PID"] and stop["CLAUDE_PID"].isdigit()
    # the transcript is where the hook said it is, inside the private HOME
    transcript = Path(stop["payload"]["transcript_path"])
    assert transcript.exists() and h.home in transcript.parents


@live
@needs_claude
@needs_tmux
def test_tui_ready_and_permission_dialog(tmp_path: Path) -> None:
    with api.AnthropicServer([api.tool_use("Bash", BASH_WRITE), api.text("Done.")]) as srv:
        h = claude.make_home(tmp_path)
        settings = claude.write_logging_hooks(h)
        tui = claude.start_tui(h, srv.url, extra_args=["--settings", settings])
        try:
            tui.wait_ready()
            assert tui.session() is not None
            tui.submit("write hi to out.txt")
            screen = tui.wait_for("Do you want to proceed?")
            assert "echo hi > out.txt" in screen
            req = claude.wait_hook(h, "PermissionRequest")[0]
            assert req["payload"]["tool_name"] == "Bash"
            assert int(req["CLAUDE_PID"]) == tui.pid()
            state = tui.wait_session(lambda d: d.get("status") == "waiting")
            assert state["waitingFor"] == "permission prompt"
            tui.press("Escape")  # deny: no hook fires, the session file goes idle
            tui.wait_status("idle")
        finally:
            tui.close()
        assert not (h.cwd / "out.txt").exists()
