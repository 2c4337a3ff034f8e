"""What the ``agentspool`` command costs before it does any work, against the bare
interpreter, measured side by side (issue 26, ADR 0058).

Each command runs as a user runs it (the console script, a fresh process) in a private,
empty home (``HOME``, ``XDG_*``, ``AGENTSPOOL_RUNTIME_DIR``, ``CLAUDE_CONFIG_DIR``): it
finds nothing to read, so what it costs is its start-up. Every run gets a new home:
``usage`` is the first on that machine (a store created, no kept answer; ADR 0043). The
baseline is the same interpreter running ``-c pass`` with its site, as the console
script does. Runs are interleaved round-robin so machine noise hits all alike; the
median wall time and the median CPU time (user + system, from ``wait4``: what a loaded
machine disturbs least) are printed, each also above the bare interpreter's.

The package is run from this checkout's files (uncommitted ones included), laid out as
``pyproject.toml``'s ``package-dir`` maps them and put first on ``PYTHONPATH``.
``--against REV`` also runs the same commands from the git revision REV, laid out alike,
interleaved with this checkout's, and prints the milliseconds saved.

Usage: ``.venv/bin/python benchmarks/startup.py [runs] [--against REV]`` (default 30,
after 3 rounds of warm-up). The ratios print last.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(os.path.dirname(sys.executable), "agentspool")
COMMANDS = {
    "--help": ["--help"],
    "usage": ["usage", "--by", "session", "--json"],
    "ls": ["ls", "--json"],
    "search": ["search", "--json", "nothing"],
    "lifecycle": ["lifecycle", "--help"],
}
"""What is measured: the name printed, the command line after ``agentspool``."""


def _home(root: str, n: int) -> dict[str, str]:
    """A private, empty home and the environment that points every default into it."""
    home = os.path.join(root, f"home-{n}")
    runtime = os.path.join(home, "run")
    os.makedirs(runtime, mode=0o700)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "HOME": home,
        "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "AGENTSPOOL_RUNTIME_DIR": runtime,
        "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
    }


def tree_of(source: str, into: str) -> str:
    """The package in the checkout ``source``, laid out as its ``pyproject.toml``'s
    ``package-dir`` maps the folders into ``agentspool``; the folder to put first on
    ``PYTHONPATH``. Both sides are laid out alike, so neither pays for a layout."""
    with open(os.path.join(source, "pyproject.toml"), "rb") as fh:
        folders = tomllib.load(fh)["tool"]["setuptools"]["package-dir"]
    package = os.path.join(into, "agentspool")
    shutil.copytree(os.path.join(source, folders["agentspool"]), package)
    for name, folder in folders.items():
        if name != "agentspool":
            os.symlink(os.path.join(source, folder), os.path.join(package, name.split(".")[1]))
    return into


def checkout_of(rev: str, root: str) -> str:
    """The files of the git revision ``rev``, in a new folder under ``root``."""
    source = os.path.join(root, "source")
    os.makedirs(source)
    archive = subprocess.run(
        ["git", "-C", ROOT, "archive", rev], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", source], input=archive, check=True)
    return source


def _time(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The wall time and the CPU time (user + system) of one run of ``argv``."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[1:]} exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


Times = dict[str, list[tuple[float, float]]]


def measure(runs: int, trees: dict[str, str], root: str) -> Times:
    """Every (tree, command) pair and the bare interpreter, ``runs`` times round-robin:
    each run's wall and CPU time."""
    pairs = {"bare": ([sys.executable, "-c", "pass"], "")}
    for label, path in trees.items():
        for name, words in COMMANDS.items():
            pairs[f"{name} {label}".strip()] = ([sys.executable, SCRIPT, *words], path)
    times: Times = {name: [] for name in pairs}
    homes = 0
    for round_ in range(runs + 3):  # the first three warm the page cache and the pyc files
        for name, (argv, path) in pairs.items():
            homes += 1
            env = _home(root, homes)
            if path:
                env["PYTHONPATH"] = path
            elapsed = _time(argv, env)
            if round_ >= 3:
                times[name].append(elapsed)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", type=int, default=30)
    parser.add_argument("--against", metavar="REV", help="also measure this git revision")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentspool-bench-startup-") as root:
        trees = {"": tree_of(ROOT, os.path.join(root, "now"))}
        if args.against:
            before = tree_of(checkout_of(args.against, root), os.path.join(root, "before"))
            trees = {"now": trees[""], args.against: before}
        times = measure(args.runs, trees, root)
    wall = {name: statistics.median(w for w, _ in t) * 1000 for name, t in times.items()}
    cpu = {name: statistics.median(c for _, c in t) * 1000 for name, t in times.items()}
    print(f"{args.runs} interleaved runs each, load average {os.getloadavg()[0]:.2f}")
    print(f"{'':>22}  median wall (above bare)  median CPU (above bare)")
    for name in times:
        print(
            f"{name:>22}: {wall[name]:7.1f} ms ({wall[name] - wall['bare']:6.1f})"
            f"        {cpu[name]:7.1f} ms ({cpu[name] - cpu['bare']:6.1f})"
        )
    if args.against:
        print(f"saved against {args.against}, CPU ms above bare (wall in brackets):")
        for name in COMMANDS:
            was, now = f"{name} {args.against}", f"{name} now"
            print(
                f"{name:>10}: {cpu[was] - cpu['bare']:6.1f} -> {cpu[now] - cpu['bare']:6.1f}, "
                f"{cpu[was] - cpu[now]:5.1f} ms saved ({wall[was] - wall[now]:5.1f})"
            )
    for name in COMMANDS:
        key = f"{name} now" if args.against else name
        print(f"ratio {name}/bare (median CPU time): {cpu[key] / cpu['bare']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
