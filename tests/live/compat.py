"""Run the Tier-2 scenarios against several releases of each CLI; print the table.

``make compat`` runs this. Per CLI the versions are the one pinned in
``tests/live/package.json`` and the newest stable release the npm registry offers (or
those given with ``--<cli>``: ``--claude``, ``--codex``, ``--gemini``, ``--opencode``,
``--copilot``, ``--qwen``, ``--kimi``, ``--pi``). Each version other than the installed
pin is installed with npm into its own prefix under ``$AGENTSPOOL_COMPAT_DIR`` (default
``$TMPDIR/agentspool-compat``), reused when already there, and the scenario module runs
with the harness pointed at that binary (``<env prefix>_BIN``, e.g.
``AGENTSPOOL_CLAUDE_BIN``, and ``<env prefix>_VERSION``). A version whose scenarios fail is
listed as failing, with the count; one whose install fails is listed as not installed.
Every ``read_chat`` the scenarios make is observed (``compat_drift.py``): the table also
says what that version wrote that agentspool does not know (ADR 0014).
``--update-readme`` writes the table into README.md between its compat markers.

Exit status: 0 when every version passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LIVE_DIR = Path(__file__).resolve().parent
REPO = LIVE_DIR.parent.parent
README = REPO / "README.md"
BEGIN, END = "<!-- compat:begin -->", "<!-- compat:end -->"
_STABLE = re.compile(r"^\d+\.\d+\.\d+$")


@dataclass(frozen=True)
class Cli:
    name: str
    package: str
    binary: str
    scenarios: str
    env_prefix: str


CLIS = {
    "claude": Cli(
        "Claude Code",
        "@anthropic-ai/claude-code",
        "claude",
        "tests/live/test_claude_scenarios.py",
        "AGENTSPOOL_CLAUDE",
    ),
    "codex": Cli(
        "Codex", "@openai/codex", "codex", "tests/live/test_codex_scenarios.py", "AGENTSPOOL_CODEX"
    ),
    "gemini": Cli(
        "Gemini CLI",
        "@google/gemini-cli",
        "gemini",
        "tests/live/test_gemini_scenarios.py",
        "AGENTSPOOL_GEMINI",
    ),
    "opencode": Cli(
        "OpenCode",
        "opencode-ai",
        "opencode",
        "tests/live/test_opencode_scenarios.py",
        "AGENTSPOOL_OPENCODE",
    ),
    "copilot": Cli(
        "Copilot CLI",
        "@github/copilot",
        "copilot",
        "tests/live/test_copilot_scenarios.py",
        "AGENTSPOOL_COPILOT",
    ),
    "kimi": Cli(
        "Kimi Code",
        "@moonshot-ai/kimi-code",
        "kimi",
        "tests/live/test_kimi_scenarios.py",
        "AGENTSPOOL_KIMI",
    ),
    "qwen": Cli(
        "Qwen Code",
        "@qwen-code/qwen-code",
        "qwen",
        "tests/live/test_qwen_scenarios.py",
        "AGENTSPOOL_QWEN",
    ),
    "pi": Cli(
        "Pi",
        "@mariozechner/pi-coding-agent",
        "pi",
        "tests/live/test_pi_scenarios.py",
        "AGENTSPOOL_PI",
    ),
}


@dataclass(frozen=True)
class Outcome:
    cli: Cli
    version: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    problem: str = ""
    drift: dict[str, Any] = field(default_factory=dict)
    """What the scenarios' reads did not know (compat_drift.py's report)."""

    @property
    def unknown(self) -> str:
        """Counts per source, for the table's last column."""
        parts = []
        for source in ("transcript", "spool", "native"):
            seen = self.drift.get(source) or {}
            counts = [
                _count(len(seen.get("types", [])), "type"),
                _count(len(seen.get("fields", [])), "field"),
                f"{seen['corrupt']} unreadable" if seen.get("corrupt") else "",
            ]
            if any(counts):
                parts.append(f"{source}: " + ", ".join(c for c in counts if c))
        if not self.drift:
            return "—"
        return "; ".join(parts) or "nothing"

    def details(self) -> list[str]:
        names = []
        for source in ("transcript", "spool", "native"):
            seen = self.drift.get(source) or {}
            names += [f"{source} type `{n}`" for n in seen.get("types", [])]
            names += [f"{source} field `{n}`" for n in seen.get("fields", [])]
        return names

    @property
    def result(self) -> str:
        if self.problem:
            return self.problem
        if self.failed:
            return f"failing ({self.failed} of {self.passed + self.failed})"
        if not self.passed:
            return "not run (all skipped)"
        return "pass"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}" if n else ""


def pinned(package: str) -> str:
    deps = json.loads((LIVE_DIR / "package.json").read_text())["dependencies"]
    return str(deps[package])


def newest(package: str) -> str:
    out = subprocess.run(
        ["npm", "view", package, "versions", "--json"],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    stable = [v for v in json.loads(out) if _STABLE.match(v)]
    return str(max(stable, key=lambda v: tuple(int(p) for p in v.split("."))))


def binary_for(cli: Cli, version: str, cache: Path) -> Path:
    """The CLI's binary at ``version``: the installed pin, else its own npm prefix."""
    if version == pinned(cli.package):
        local = LIVE_DIR / "node_modules" / ".bin" / cli.binary
        if local.exists():
            return local
    prefix = cache / f"{cli.binary}-{version}"
    binary = prefix / "node_modules" / ".bin" / cli.binary
    if not binary.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(prefix),
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                f"{cli.package}@{version}",
            ],
            check=True,
            timeout=600,
        )
    return binary


def run_scenarios(cli: Cli, version: str, binary: Path, pytest_args: list[str]) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="agentspool-compat-") as tmp:
        report = Path(tmp) / "junit.xml"
        drift_report = Path(tmp) / "drift.json"
        env = {
            **os.environ,
            f"{cli.env_prefix}_BIN": str(binary),
            f"{cli.env_prefix}_VERSION": version,
            "AGENTSPOOL_COMPAT_DRIFT": str(drift_report),
        }
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                cli.scenarios,
                "-q",
                "-p",
                "compat_drift",
                f"--junitxml={report}",
                *pytest_args,
            ],
            cwd=REPO,
            env=env,
            check=False,
        )
        if not report.exists():
            return Outcome(cli, version, problem="pytest wrote no report")
        suite = ET.parse(report).getroot()
        if suite.tag == "testsuites":
            suite = suite[0]
        total = int(suite.get("tests", 0))
        failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped = int(suite.get("skipped", 0))
        drift = json.loads(drift_report.read_text()) if drift_report.exists() else {}
        problem = ""
        if drift.get("versions") and drift["versions"] != [version]:
            problem = f"transcripts name {', '.join(drift['versions'])}"
        return Outcome(cli, version, total - failed - skipped, failed, skipped, problem, drift)


def table(outcomes: list[Outcome], when: str) -> str:
    rows = [
        f"Tier-2 scenarios, run by `make compat` on {when} (the pinned release and the "
        "newest on npm; one row where they are the same):",
        "",
        "| CLI | version | passed | failed | skipped | result | not known to agentspool |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        rows.append(
            f"| {o.cli.name} | {o.version} | {o.passed} | {o.failed} | {o.skipped} "
            f"| {o.result} | {o.unknown} |"
        )
    notes = [o for o in outcomes if o.details()]
    if notes:
        rows.append("")
    for o in notes:
        rows.append(f"- {o.cli.name} {o.version}: " + ", ".join(o.details()))
    return "\n".join(rows)


def update_readme(text: str) -> None:
    readme = README.read_text()
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{README}: no {BEGIN} … {END} section to update")
    README.write_text(readme[: start + len(BEGIN)] + "\n" + text + "\n" + readme[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for key in CLIS:
        parser.add_argument(
            f"--{key}",
            action="append",
            metavar="VERSION",
            help="a version to run (repeatable; default: the pin and the newest)",
        )
    parser.add_argument("--only", choices=sorted(CLIS), help="run one CLI's scenarios only")
    parser.add_argument("--update-readme", action="store_true")
    parser.add_argument("pytest_args", nargs="*", help="passed on to pytest (after --)")
    args = parser.parse_args(argv)
    cache = Path(
        os.environ.get("AGENTSPOOL_COMPAT_DIR") or Path(tempfile.gettempdir()) / "agentspool-compat"
    )
    outcomes: list[Outcome] = []
    for key, cli in CLIS.items():
        if args.only and key != args.only:
            continue
        versions = getattr(args, key) or [pinned(cli.package), newest(cli.package)]
        for version in dict.fromkeys(versions):
            try:
                binary = binary_for(cli, version, cache)
            except (subprocess.SubprocessError, OSError) as exc:
                print(f"compat: {cli.package}@{version}: not installed: {exc}", file=sys.stderr)
                outcomes.append(Outcome(cli, version, problem="not installed"))
                continue
            print(f"compat: {cli.name} {version} ({binary})", file=sys.stderr, flush=True)
            outcomes.append(run_scenarios(cli, version, binary, args.pytest_args))
    text = table(outcomes, datetime.date.today().isoformat())
    print(text)
    if args.update_readme:
        update_readme(text)
    return 0 if outcomes and all(o.result == "pass" for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
