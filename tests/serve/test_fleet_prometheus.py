"""The fleet recipe run for real: two ``agentspool serve`` processes (two runtime dirs,
standing for two machines) over runs written by the real hooks, scraped by Debian's
Prometheus with the shipped rules, alerts routed by Debian's Alertmanager to a webhook
on 127.0.0.1 — with the shipped files, only the addresses and the waiting times made
short enough for a test.

CI installs both (``.ci/run``); elsewhere the test says why it cannot run.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from receivers import Receiver
from serving import Served

FLEET = Path(__file__).resolve().parents[2] / "docs" / "fleet"
DEADLINE = 90.0


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found is not None:
            return found
    if os.environ.get("CI"):
        pytest.fail(f"{names[0]} is not installed: .ci/run installs it")
    pytest.skip(f"{names[0]} is not installed (Debian: prometheus, prometheus-alertmanager)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _until(what: str, probe: Callable[[], Any]) -> Any:
    """``probe()`` until it returns something true, within ``DEADLINE`` seconds."""
    end = time.monotonic() + DEADLINE
    last: Any = None
    while time.monotonic() < end:
        try:
            last = probe()
        except OSError as exc:  # not up yet
            last = exc
        if last and not isinstance(last, OSError):
            return last
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {DEADLINE:g} s (last: {last!r})")


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


class Daemon:
    def __init__(self, argv: list[str], log: Path) -> None:
        self.log = log.open("wb")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def _machine(root: Path, make_claude_run, *, waiting: bool) -> str:
    """A runtime dir with one working run and, on the first machine, one run waiting
    on a permission prompt."""
    runtime = root / "runtime"
    runtime.mkdir(mode=0o700, parents=True)
    transcript = root / "t.jsonl"
    transcript.write_text("")
    base = {"session_id": f"s-{root.name}", "transcript_path": str(transcript), "cwd": str(root)}
    works = make_claude_run(str(runtime), "works")
    works.fire("SessionStart", base)
    works.fire("UserPromptSubmit", {**base, "prompt_id": "p1", "prompt": "build it"})
    if waiting:
        asks = make_claude_run(str(runtime), "asks")
        bash = {
            **base,
            "session_id": "s-asks",
            "prompt_id": "p1",
            "tool_name": "Bash",
            "tool_use_id": "toolu_1",
            "tool_input": {"command": "make deploy"},
        }
        asks.fire("SessionStart", {**base, "session_id": "s-asks"})
        for event in ("UserPromptSubmit", "PreToolUse", "PermissionRequest"):
            asks.fire(event, bash)
    return str(runtime)


def _short(text: str, replacements: dict[str, str]) -> str:
    for old, new in replacements.items():
        assert old in text, f"the shipped file no longer holds {old!r}"
        text = text.replace(old, new)
    return text


@pytest.fixture
def webhook() -> Iterator[Receiver]:
    """Alertmanager's webhook receiver: what it posts, recorded."""
    with Receiver() as made:
        yield made


def test_prometheus_scrapes_two_machines_and_alertmanager_delivers_the_wait(
    tmp_path: Path, make_claude_run, webhook: Receiver
) -> None:
    prometheus = _binary("prometheus")
    alertmanager = _binary("prometheus-alertmanager", "alertmanager")
    one = _machine(tmp_path / "one", make_claude_run, waiting=True)
    two = _machine(tmp_path / "two", make_claude_run, waiting=False)
    am_port, prom_port = _free_port(), _free_port()

    config = tmp_path / "fleet"
    config.mkdir()
    (config / "alertmanager.yml").write_text(
        _short(
            (FLEET / "alertmanager.yml").read_text(),
            {
                "http://alerts.example.internal:9099/agentspool": webhook.url + "/agentspool",
                "group_wait: 10s": "group_wait: 1s",
                # No mail leaves this machine: the e-mail receiver points at a closed port.
                "smtp.example.internal:587": f"127.0.0.1:{_free_port()}",
            },
        )
    )
    (config / "agentspool-rules.yml").write_text(
        _short(
            (FLEET / "agentspool-rules.yml").read_text(),
            {
                'waits_for=~"approval|question"} > 600\n        for: 1m': (
                    'waits_for=~"approval|question"} > 1\n        for: 2s'
                )
            },
        )
    )
    started: list[Daemon] = []
    servers: list[Served] = []
    try:
        for runtime in (one, two):
            servers.append(Served(["--runtime-dir", runtime]))
        targets = [f"127.0.0.1:{s.port}" for s in servers]
        prom_config = _short(
            (FLEET / "prometheus.yml").read_text(),
            {
                "scrape_interval: 15s": "scrape_interval: 1s",
                "evaluation_interval: 15s": "evaluation_interval: 1s",
                '"127.0.0.1:9093"': f'"127.0.0.1:{am_port}"',
                '"build-box-1.example.internal:8765"': f'"{targets[0]}"',
                '"build-box-2.example.internal:8765"': f'"{targets[1]}"',
            },
        )
        (config / "prometheus.yml").write_text(prom_config)
        # Loopback binds need no token: the shipped file's credentials are any token.
        (config / "agentspool.token").write_text("unused-on-loopback\n")
        started.append(
            Daemon(
                [
                    alertmanager,
                    f"--config.file={config / 'alertmanager.yml'}",
                    f"--storage.path={tmp_path / 'am-data'}",
                    f"--web.listen-address=127.0.0.1:{am_port}",
                    "--cluster.listen-address=",
                ],
                tmp_path / "alertmanager.log",
            )
        )
        started.append(
            Daemon(
                [
                    prometheus,
                    f"--config.file={config / 'prometheus.yml'}",
                    f"--storage.tsdb.path={tmp_path / 'prom-data'}",
                    f"--web.listen-address=127.0.0.1:{prom_port}",
                ],
                tmp_path / "prometheus.log",
            )
        )
        api = f"http://127.0.0.1:{prom_port}/api/v1"

        def query(promql: str) -> list[dict[str, Any]]:
            found = _get(f"{api}/query?query={urllib.parse.quote(promql)}")
            return found["data"]["result"]

        def both_up() -> bool:
            up = query('up{job="agentspool"} == 1')
            return len(up) == 2

        _until("both serve instances scraped", both_up)
        states = _until(
            "runs by instance and state",
            lambda: (
                {
                    (r["metric"]["instance"], r["metric"]["state"]): float(r["value"][1])
                    for r in query("sum by (instance, state) (agentspool_runs)")
                }
                if len(query("agentspool_runs")) >= 3
                else None
            ),
        )
        assert states == {
            (targets[0], "working"): 1.0,
            (targets[0], "needs_input"): 1.0,
            (targets[1], "working"): 1.0,
        }

        def firing() -> list[dict[str, Any]]:
            alerts = _get(f"{api}/alerts")["data"]["alerts"]
            return [a for a in alerts if a["state"] == "firing"]

        fired = _until("the waiting-too-long alert firing", firing)
        assert [(a["labels"]["alertname"], a["labels"]["run"]) for a in fired] == [
            ("AgentWaitingOnYou", "claude-code:asks")
        ]
        assert fired[0]["labels"]["instance"] == targets[0]
        assert fired[0]["labels"]["waits_for"] == "approval"

        posted = _until(
            "Alertmanager's webhook post", lambda: [post.json() for post in webhook.posts]
        )
        alerts = [alert for post in posted for alert in post["alerts"]]
        assert {a["labels"]["alertname"] for a in alerts} == {"AgentWaitingOnYou"}
        assert {a["labels"]["run"] for a in alerts} == {"claude-code:asks"}
        assert "waits on you (approval)" in alerts[0]["annotations"]["summary"]
    finally:
        for daemon in reversed(started):
            daemon.stop()
        for server in servers:
            server.stop()
