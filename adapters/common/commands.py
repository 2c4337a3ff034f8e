"""The hook command lines ``setup`` bakes into an agent's settings.

Everything the hook needs is in its argv, so it reads no configuration: the absolute
interpreter (never a ``python3`` from PATH: a version-manager shim alone costs ~100 ms),
``-I -S`` (no site, no user paths, no cwd on ``sys.path``: the agent's working directory
may hold a package that would shadow ours), the directory our package lives in, then
the run's runtime dir, run id and event name. ``-c`` rather than a script path: Python
exits 2 when a script file is missing, and exit 2 blocks the tool in Claude Code; the
bootstrap swallows every error, so a broken install still exits 0.
"""

from __future__ import annotations

import os
import shlex
import sys

from agentspool.adapters import registry
from agentspool.spool.layout import HOOK_FAILURES

# Kept on one physical line per statement so it survives JSON and TOML round trips
# unchanged; `python -c` accepts the newlines. No single quote in it: shlex quotes the
# code in single quotes, and each one inside would grow into five characters at every
# quoting layer. No backslash either, and no triple double quote inside the recorder.
#
# A hook that cannot even import agentspool (its package root removed, or replaced by
# another install) records why in ``HOOK_FAILURES`` in the runtime dir — the one the
# hooks and readers agree on (``write.default_runtime_dir``), only if it is this user's
# and writable by no one else, and only while that file is under 64 KiB — so that
# ``agentspool doctor`` can say so; it still exits 0 and prints nothing. The recorder
# cannot live in a module (the package it would live in is what went missing), so it
# travels in the command as a string that only a failure ``exec``s: the interpreter
# compiles the whole ``-c`` text on every start, and compiling the recorder as code cost
# every healthy hook ~0.3 ms, about 4 % of the bare interpreter (benchmarks/hooks.py,
# issue 21), where tokenizing one string literal costs next to nothing.
_RECORD_FAILURE = (
    'import os;g=os.environ.get;u=os.getuid();x=g("XDG_RUNTIME_DIR","");'
    'd=g("AGENTSPOOL_RUNTIME_DIR") or (x.rstrip("/")+"/agentspool" if x[:1]=="/" and '
    'os.path.isdir(x) else (g("TMPDIR") or "/tmp").rstrip("/")+"/agentspool-"+str(u));'
    'os.makedirs(d,0o700,True);s=os.lstat(d);p=d+"/{failures}"\n'
    "if s.st_uid==u and not s.st_mode&0o22 and not(os.path.isfile(p) and "
    "os.path.getsize(p)>65536):"
    "f=os.open(p,os.O_WRONLY|os.O_APPEND|os.O_CREAT|os.O_NOFOLLOW,0o600);"
    'os.write(f," ".join((str(int(__import__("time").time())),"{module}",sys.executable,'
    'str(sys.argv[1:2]),type(e).__name__,str(e).replace(chr(10)," "))).encode("utf-8",'
    '"replace")+chr(10).encode());os.close(f)'
)
_BOOTSTRAP = (
    "import sys\n"
    "try:\n"
    " sys.path.insert(0,sys.argv[1]);"
    "from agentspool.hooks.{module} import main;main(sys.argv[2:])\n"
    "except BaseException as e:\n"
    ' try:exec("""' + _RECORD_FAILURE + '""")\n'
    " except BaseException:pass"
)

HOOK_MODULES = registry.hook_modules()
"""The modules under ``agentspool.hooks`` a command may name: the registry's table's."""
INSTALLED_FLAG = "--installed"
"""argv marker of a hook armed once in the CLI's own settings (``agentspool install``):
it carries no run; the hook derives the run from the agent process."""
_BOOTSTRAP_MARK = "from agentspool.hooks."


def package_root() -> str:
    """The directory holding the ``agentspool`` package (site-packages, or the editable tree)."""
    # <root>/agentspool/adapters/common/commands.py: found from here, not by importing
    # the facade (no lower layer imports it).
    return os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    )


def hook_argv(
    module: str, event: str, runtime_dir: str = "", run_id: str = "", *, installed: bool = False
) -> list[str]:
    """argv of the hook for ``event``; without a run, the hook takes it from the environment.

    ``runtime_dir``/``run_id`` empty means "read ``AGENTSPOOL_RUNTIME_DIR`` and
    ``AGENTSPOOL_RUN_ID`` at hook time" (used where the command must be identical for
    every run, e.g. Codex's trusted-hook hashes). ``installed=True`` is the form
    ``agentspool install`` writes into the CLI's own settings: ``--installed <Event>``
    after the package root, no run at all.
    """
    if module not in HOOK_MODULES:
        raise ValueError(f"no hook module {module!r}")
    if installed and run_id:
        raise ValueError("an installed hook carries no run")
    bootstrap = _BOOTSTRAP.format(module=module, failures=HOOK_FAILURES)
    argv = [sys.executable, "-I", "-S", "-c", bootstrap, package_root()]
    if installed:
        argv.append(INSTALLED_FLAG)
    elif run_id:
        argv += [runtime_dir, run_id]
    argv.append(event)
    return argv


def hook_command(
    module: str, event: str, runtime_dir: str = "", run_id: str = "", *, installed: bool = False
) -> str:
    return shlex.join(hook_argv(module, event, runtime_dir, run_id, installed=installed))


def is_installed_hook(command: str) -> bool:
    """True if ``command`` is an installed agentspool hook, whatever interpreter or
    package root it names (an older install, another venv): ``uninstall`` finds its
    entries by this, not by an exact string, so it still works after the user moved or
    edited things."""
    if _BOOTSTRAP_MARK not in command or INSTALLED_FLAG not in command:
        return False
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    if "-c" not in argv[:-1] or len(argv) < 3:
        return False
    bootstrap = argv[argv.index("-c") + 1]
    return (
        bootstrap.startswith("import sys")
        and _BOOTSTRAP_MARK in bootstrap
        and (argv[-2] == INSTALLED_FLAG)
    )
