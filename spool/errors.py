"""The one exception tree. Every error agentspool raises on purpose is an ``AgentspoolError``.

::

    AgentspoolError(Exception)
    ├── RunIdError(AgentspoolError, ValueError)            a run id that could escape its dir
    ├── RuntimeDirError(AgentspoolError, PermissionError)  runtime dir not private to this user
    ├── UnknownProviderError(AgentspoolError, LookupError) no adapter registered under a name
    ├── SettingsError(AgentspoolError, ValueError)         a settings/config file we must not edit
    ├── TranscriptGoneError(AgentspoolError, FileNotFoundError)
    │                                                      a located transcript vanished
    ├── DeltaParseError(AgentspoolError, ValueError)       records that are not one complete
    │                                                      parse (a delta) given to
    │                                                      assemble_session_detail
    ├── StoreError(AgentspoolError, RuntimeError)          a session store we cannot use as is
    │                                                      (newer schema, bad records)
    ├── UnsupportedError(AgentspoolError, ValueError)      asked a provider for what it cannot
    │                                                      do (trust="config" without a gate)
    ├── CompressedRolloutError(AgentspoolError, RuntimeError)
    │                                                      a .zst transcript, and the optional
    │                                                      zstandard package is missing
    ├── DeclarationError(AgentspoolError, ValueError)      a task-state declaration refused
    │                                                      (no run, no reason, dirty worktree)
    ├── RunNotFoundError(AgentspoolError, LookupError)     no such run where it was looked for
    ├── SessionNotFoundError(AgentspoolError, LookupError) no session has that id, id prefix
    │                                                      or transcript file
    ├── AmbiguousSessionError(AgentspoolError, LookupError)
    │                                                      an id prefix several sessions share
    ├── NotRegularFileError(AgentspoolError, OSError)      a path that should be a file is a
    │                                                      FIFO, a dir, a device (not read,
    │                                                      not written: it could block)
    ├── TranscriptReplacedError(AgentspoolError, OSError)  a transcript replaced while the
    │                                                      history index read it (not stored)
    └── MissingExtraError(AgentspoolError, ImportError)    a feature whose pip extra is not
                                                           installed

Each carries the offending object as attributes and names it in ``str()``, so the CLI's
one-line error is always "<what>: <path or value>: <problem>". An attribute named
``path`` always holds a filesystem path. This module is standard
library only: hooks and the spool import it.
"""

from __future__ import annotations


class AgentspoolError(Exception):
    """Base class of every error agentspool raises deliberately."""


class RunIdError(AgentspoolError, ValueError):
    def __init__(self, run_id: str, problem: str) -> None:
        super().__init__(f"invalid run id {run_id!r}: {problem}")
        self.run_id = run_id


class RuntimeDirError(AgentspoolError, PermissionError):
    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"runtime dir {path}: {problem}")
        self.path = path


class UnknownProviderError(AgentspoolError, LookupError):
    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"unknown provider {name!r} (known: {', '.join(known)})")
        self.name = name


class SettingsError(AgentspoolError, ValueError):
    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path


class TranscriptGoneError(AgentspoolError, FileNotFoundError):
    def __init__(self, run_id: str, path: str) -> None:
        super().__init__(f"transcript of run {run_id!r} is gone: {path}")
        self.run_id = run_id
        self.path = path


class DeltaParseError(AgentspoolError, ValueError):
    """``assemble_session_detail`` got records that are not one complete parse."""

    def __init__(self, problem: str, seq: int = 0) -> None:
        super().__init__(f"session detail needs one complete parse: {problem}")
        self.problem = problem
        self.seq = seq


class StoreError(AgentspoolError, RuntimeError):
    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"session store {path}: {problem}")
        self.path = path
        self.problem = problem


class UnsupportedError(AgentspoolError, ValueError):
    def __init__(self, provider: str, problem: str) -> None:
        super().__init__(f"provider {provider!r} {problem}")
        self.provider = provider
        self.problem = problem


class CompressedRolloutError(AgentspoolError, RuntimeError):
    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path}: reading a compressed transcript needs the optional "
            "'zstandard' package (pip install 'agentspool[zstd]')"
        )
        self.path = path


class DeclarationError(AgentspoolError, ValueError):
    """``agentspool lifecycle`` refused: ``problem`` says why and what to do."""

    def __init__(self, run_id: str, problem: str) -> None:
        super().__init__(f"run {run_id!r}: {problem}" if run_id else problem)
        self.run_id = run_id
        self.problem = problem


class RunNotFoundError(AgentspoolError, LookupError):
    """No such run where it was looked for (``replay``: the runtime dir or the archive)."""

    def __init__(self, run_id: str, where: str) -> None:
        super().__init__(f"run {run_id!r}: not found in {where}")
        self.run_id = run_id
        self.where = where


class SessionNotFoundError(AgentspoolError, LookupError):
    """``find_session``: no session has the id (or id prefix), or the file is not a
    transcript any registered provider reads."""

    def __init__(self, ref: str, problem: str) -> None:
        super().__init__(f"session {ref!r}: {problem}")
        self.ref = ref
        self.problem = problem


class AmbiguousSessionError(AgentspoolError, LookupError):
    """``find_session``: an id prefix several sessions share; ``candidates`` are their
    ``provider:session id``, sorted."""

    SHOWN = 8

    def __init__(self, ref: str, candidates: list[str]) -> None:
        shown = ", ".join(candidates[: self.SHOWN])
        more = f", +{len(candidates) - self.SHOWN} more" if len(candidates) > self.SHOWN else ""
        super().__init__(
            f"session {ref!r} is ambiguous: {len(candidates)} sessions start with it "
            f"({shown}{more}); give more of the id"
        )
        self.ref = ref
        self.candidates = candidates


class NotRegularFileError(AgentspoolError, OSError):
    """A transcript, settings or evidence file that is not a regular file: opened without
    blocking, checked and closed unread (a FIFO would hold the reader until someone
    wrote to it). ``kind`` says what it is."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path}: is {kind}, not a regular file; not read")
        self.path = path
        self.kind = kind


class TranscriptReplacedError(AgentspoolError, OSError):
    """A transcript file replaced by another (a new inode) while the history index read
    it: what was read is not stored, and the next run reads the new file."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path}: replaced while it was read; not stored")
        self.path = path


class MissingExtraError(AgentspoolError, ImportError):
    """A feature whose optional dependencies (a pip extra) are not installed."""

    def __init__(self, feature: str, extra: str, module: str) -> None:
        super().__init__(
            f"{feature} needs the {extra!r} extra: pip install 'agentspool[{extra}]' "
            f"(no module {module!r})"
        )
        self.extra = extra


EXIT_ERROR = 1
"""The exit status of a failure that is one line: any ``AgentspoolError`` or ``OSError``."""
EXIT_USAGE = 2
"""Bad usage: an argument or a query that does not parse (argparse's own status)."""
EXIT_TRANSCRIPT_GONE = 3
EXIT_REFUSED = 4
"""A declaration refused, nothing recorded (``DeclarationError``)."""
EXIT_INTERNAL = 70
"""EX_SOFTWARE: a bug of ours; the traceback is in a file."""


def exit_code(exc: BaseException) -> int:
    """The exit status an error means, the same wherever it is reported: the command's
    own status, or ``exit_code`` in ``agentspool serve``'s JSON errors."""
    if isinstance(exc, TranscriptGoneError):
        return EXIT_TRANSCRIPT_GONE
    if isinstance(exc, DeclarationError):
        return EXIT_REFUSED
    if isinstance(exc, AgentspoolError | OSError):
        return EXIT_ERROR
    return EXIT_INTERNAL
