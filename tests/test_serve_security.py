"""``agentspool serve`` is safe by default: loopback only unless a token exists (and
then every request carries it), the ``Host`` header must name the bound address, no
CORS unless asked, every endpoint read-only. Nothing here binds or points at an
address off this machine: 127.0.0.2 is loopback, bound as "another address" would be;
192.0.2.1 (TEST-NET-1) is never bound, serve refuses before it would try."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from serving import Served

SERVE = [sys.executable, "-m", "agentspool.cli.main", "serve"]
PATHS = [
    "/",
    "/static/app.js",
    "/api/v1/server",
    "/api/v1/openapi.json",
    "/api/v1/runs",
    "/api/v1/runs/r1",
    "/api/v1/runs/r1/explain",
    "/api/v1/runs/r1/replay",
    "/api/v1/sessions",
    "/api/v1/sessions/abc",
    "/api/v1/usage",
    "/api/v1/search?q=x",
    "/api/v1/events",
    "/api/v1/nothing",
]


def _token_file() -> Path:
    return Path(os.environ["AGENTSPOOL_DATA_DIR"]) / "serve-token"


def _refused(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*SERVE, *args], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and done.stdout == "", done
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    return done


def test_another_address_without_a_token_refuses_before_binding(runtime_dir) -> None:
    done = _refused("--host", "192.0.2.1", "--port", "0", "--runtime-dir", runtime_dir)
    assert done.stderr == (
        f"agentspool: {_token_file()}: no token yet: a bind other than 127.0.0.1, ::1 or "
        "localhost needs one; `agentspool serve --token` makes it and prints it\n"
    )
    # Before binding: on a port already taken, it is still the token it says is missing.
    with socket.socket() as taken:
        taken.bind(("127.0.0.2", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = _refused("--host", "127.0.0.2", "--port", port, "--runtime-dir", runtime_dir)
        assert "no token yet" in done.stderr
    assert not _token_file().exists()  # refusing makes no token


def test_the_token_is_made_once_private_and_printed(runtime_dir) -> None:
    made = subprocess.run(
        [*SERVE, "--token"], capture_output=True, text=True, check=True, timeout=60
    )
    token = made.stdout.strip()
    assert len(token) >= 40 and made.stderr == ""
    assert stat.S_IMODE(_token_file().stat().st_mode) == 0o600
    again = subprocess.run(
        [*SERVE, "--token"], capture_output=True, text=True, check=True, timeout=60
    )
    assert again.stdout.strip() == token
    _token_file().chmod(0o644)  # readable by others: refused, not used
    done = _refused("--host", "127.0.0.2", "--port", "0", "--runtime-dir", runtime_dir)
    assert "the token file is readable by others (mode 644)" in done.stderr


@pytest.fixture
def token() -> str:
    made = subprocess.run(
        [*SERVE, "--token"], capture_output=True, text=True, check=True, timeout=60
    )
    return made.stdout.strip()


def test_with_a_token_every_endpoint_needs_it(runtime_dir, token) -> None:
    with Served(["--host", "127.0.0.2", "--runtime-dir", runtime_dir]) as served:
        assert served.host == "127.0.0.2"
        for path in PATHS:
            for headers in (
                {},
                {"Authorization": "Bearer not-the-token"},
                {"Authorization": token},
            ):
                answer = served.get(path, headers)
                assert answer.status == 401, (path, headers)
                assert answer.headers["www-authenticate"].startswith("Bearer")
                assert answer.json()["error"].startswith("a token is needed")
            if path != "/api/v1/events":  # a stream: read below
                answer = served.get(path, {"Authorization": f"Bearer {token}"})
                assert answer.status != 401, path
        assert served.get("/?token=wrong").status == 401
        stream = served.events(headers={"Authorization": "Bearer wrong"})
        assert stream.status == 401
        stream.close()
        stream = served.events(headers={"Authorization": f"Bearer {token}"})
        assert stream.until("ready")[0].event == "reset"
        stream.close()
        # A browser: the page opened once with the token keeps it in a cookie.
        handed = served.get(f"/?token={token}")
        assert (handed.status, handed.headers["location"]) == (303, "/")
        cookie = handed.headers["set-cookie"]
        assert cookie.startswith(f"agentspool_token={token};")
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie
        jar = {"Cookie": cookie.split(";", 1)[0]}
        assert served.get("/api/v1/runs", jar).status == 200
        stream = served.events(headers=jar)
        assert stream.until("ready")[0].event == "reset"
        stream.close()
        assert served.get("/api/v1/runs", {"Cookie": "agentspool_token=wrong"}).status == 401
        # the Host check holds with the token too
        foreign = {"Authorization": f"Bearer {token}", "Host": f"evil.example:{served.port}"}
        assert served.get("/api/v1/runs", foreign).status == 421


def test_a_foreign_host_header_is_refused(runtime_dir) -> None:
    with Served(["--runtime-dir", runtime_dir]) as served:
        port = served.port
        for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1:{port + 1}", "127.0.0.2"):
            for path in PATHS:
                answer = served.get(path, {"Host": host})
                assert answer.status == 421, (host, path)
                assert answer.json() == {
                    "error": f"Host {host!r} does not name this server; refused",
                    "status": 421,
                    "exit_code": 1,
                }
        for host in (
            f"127.0.0.1:{port}",
            f"localhost:{port}",
            f"LOCALHOST:{port}",
            f"[::1]:{port}",
        ):
            assert served.get("/api/v1/runs", {"Host": host}).status == 200, host
        # No Host at all (HTTP/1.0): refused too.
        with socket.create_connection((served.host, port)) as raw:
            raw.sendall(b"GET /api/v1/runs HTTP/1.0\r\n\r\n")
            assert raw.recv(64).startswith(b"HTTP/1.1 421")


def test_no_cors_unless_asked_and_only_for_the_origin_asked(runtime_dir) -> None:
    asking = {"Origin": "http://localhost:3000"}
    with Served(["--runtime-dir", runtime_dir]) as served:
        answer = served.get("/api/v1/runs", asking)
        assert answer.status == 200 and "access-control-allow-origin" not in answer.headers
        preflight = {**asking, "Access-Control-Request-Method": "GET"}
        assert served.get("/api/v1/runs", preflight, method="OPTIONS").status == 405
    with Served(["--runtime-dir", runtime_dir, "--cors-origin", "http://localhost:3000"]) as served:
        answer = served.get("/api/v1/runs", asking)
        assert answer.headers["access-control-allow-origin"] == "http://localhost:3000"
        other = served.get("/api/v1/runs", {"Origin": "http://evil.example"})
        assert "access-control-allow-origin" not in other.headers
        assert served.get("/api/v1/runs", asking, method="DELETE").status == 405
