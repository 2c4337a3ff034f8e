"""``agentspool doctor`` (issue 21, item 7): an install that no longer records is said,
with its mend, and exit 1; a healthy one exits 0. The installs are real — made by
``agentspool install`` run by the interpreter and package the hook command will name —
and then broken as a person breaks them: the venv removed, the package gone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agentspool
from agentspool.adapters.common.commands import HOOK_FAILURES, package_root
from agentspool.cli.main import main


def _doctor(capsys, *more: str) -> tuple[int, list[dict]]:
    code = main(["doctor", "--json", *more])
    report = json.loads(capsys.readouterr().out)
    assert report["broken"] == (code == 1)
    return code, report["checks"]


def _hooks(checks: list[dict], provider: str) -> dict:
    (found,) = [c for c in checks if c["provider"] == provider and c["check"] == "hooks"]
    return found


def _install_with(python: str, root: str, provider: str = "claude-code") -> None:
    """``agentspool install`` run by ``python`` importing agentspool from ``root``: the
    hook command it writes names that interpreter and that package root."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from agentspool.cli.main import main; raise SystemExit(main(sys.argv[2:]))"
    )
    subprocess.run([python, "-c", code, root, "install", provider], check=True, env=os.environ)


def _site_packages() -> str:
    """Where the venv's dependencies are (msgspec, filelock, …), for a copied package."""
    import msgspec

    return os.path.dirname(os.path.dirname(msgspec.__file__))


def test_a_healthy_install_fires_and_exits_0(capsys) -> None:
    agentspool.install("claude-code")
    agentspool.install("codex")
    code, checks = _doctor(capsys)
    assert code == 0, checks
    for provider in ("claude-code", "codex"):
        hooks = _hooks(checks, provider)
        assert hooks["status"] == "ok" and "fired once, recorded" in hooks["detail"], hooks
    assert _hooks(checks, "gemini-cli")["status"] == "absent"
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "BROKEN" not in out and "claude-code  hooks:" in out


def test_a_removed_venv_is_broken_with_its_mend(tmp_path, capsys) -> None:
    venv = tmp_path / "old-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    pth = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    (pth / "site-packages" / "deps.pth").write_text(_site_packages() + "\n")
    _install_with(str(python), package_root())
    assert _doctor(capsys)[0] == 0  # it records, as installed
    shutil.rmtree(venv)  # `make install` after `pip install .`, or the venv deleted

    code, checks = _doctor(capsys)
    assert code == 1
    hooks = _hooks(checks, "claude-code")
    assert hooks["status"] == "broken"
    assert f"the interpreter it runs, {python}, is gone" in hooks["detail"]
    assert hooks["mend"].startswith("agentspool install claude-code")
    assert main(["doctor"]) == 1
    lines = capsys.readouterr().out.splitlines()
    (line,) = [ln for ln in lines if ln.startswith("BROKEN")]
    assert "claude-code" in line and "mend: agentspool install claude-code" in line


def test_a_missing_module_is_broken_and_the_hook_records_its_own_failure(tmp_path, capsys) -> None:
    root = tmp_path / "old-install"
    shutil.copytree(os.path.join(package_root(), "agentspool"), root / "agentspool")
    _install_with(sys.executable, str(root))
    settings = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    command = json.loads(settings.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    shutil.rmtree(root / "agentspool")  # the package the hook imports is gone

    # the CLI runs the hook: it still exits 0, prints nothing — and records why
    ran = subprocess.run(
        ["/bin/sh", "-c", command],
        input=b"{}",
        capture_output=True,
        env={**os.environ, "CLAUDE_PID": str(os.getpid())},
        check=False,
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    failures = Path(os.environ["AGENTSPOOL_RUNTIME_DIR"]) / HOOK_FAILURES
    assert "ModuleNotFoundError" in failures.read_text()

    code, checks = _doctor(capsys)
    assert code == 1
    hooks = _hooks(checks, "claude-code")
    assert hooks["status"] == "broken" and "the package it imports" in hooks["detail"]
    assert str(root) in hooks["detail"] and hooks["mend"].startswith("agentspool install")
    (recorded,) = [c for c in checks if c["check"] == "hook failures"]
    assert "ModuleNotFoundError" in recorded["detail"] and str(failures) in recorded["mend"]

    # ls and watch say it in one line, and go on
    runtime = str(tmp_path / "runs")
    os.mkdir(runtime, 0o700)
    assert main(["ls", "--runtime-dir", runtime]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "the installed claude-code hooks record nothing" in err[0]
    assert "agentspool doctor" in err[0]
    assert main(["watch", "--once", "--runtime-dir", runtime]) == 0
    assert len(capsys.readouterr().err.splitlines()) == 1

    agentspool.install("claude-code")  # the mend
    failures.unlink()
    assert _doctor(capsys)[0] == 0
    assert main(["ls", "--runtime-dir", runtime]) == 0
    assert capsys.readouterr().err == ""


def test_a_world_writable_runtime_dir_is_broken(tmp_path, capsys, monkeypatch) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    runtime.chmod(0o777)
    monkeypatch.setenv("AGENTSPOOL_RUNTIME_DIR", str(runtime))
    code, checks = _doctor(capsys, "--no-fire")
    assert code == 1
    (found,) = [c for c in checks if c["check"] == "runtime dir"]
    assert found["status"] == "broken" and "writable by group or others" in found["detail"]
    assert found["mend"] == f"chmod 700 {runtime}"


def test_the_compatibility_table_is_the_readmes() -> None:
    """doctor's tested versions are the README's compatibility table, oldest to newest."""
    from agentspool.diagnosis import TESTED

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("<!-- compat:begin -->")[1].split("<!-- compat:end -->")[0]
    names = {"Claude Code": "claude-code", "Codex": "codex", "Gemini CLI": "gemini-cli"}
    names["OpenCode"] = "opencode"
    seen: dict[str, list[tuple[int, ...]]] = {}
    for row in block.splitlines():
        cells = [c.strip() for c in row.strip("|").split("|")]
        if len(cells) > 5 and cells[0] in names and cells[5] == "pass":
            seen.setdefault(names[cells[0]], []).append(tuple(map(int, cells[1].split("."))))
    as_text = {p: (".".join(map(str, min(v))), ".".join(map(str, max(v)))) for p, v in seen.items()}
    assert as_text == TESTED


@pytest.mark.parametrize("version,status", [("2.1.330", "ok"), ("2.2.0", "warning")])
def test_a_cli_version_outside_the_table_is_a_warning(tmp_path, monkeypatch, version, status):
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    report = agentspool.doctor(fire=False)
    (found,) = [
        c for c in report.checks if c.provider == "claude-code" and c.check == "cli version"
    ]
    assert (found.status, version in found.detail) == (status, True), found
