"""``agentspool.spool.errors``: the one exception tree, as callers import it.

The tree lives at the bottom of the package (``agentspool.spool.errors``), where the
hooks and every layer above can raise from it without importing this facade; this
module is its public name.
"""

from agentspool.spool.errors import (
    EXIT_ERROR,
    EXIT_INTERNAL,
    EXIT_REFUSED,
    EXIT_TRANSCRIPT_GONE,
    EXIT_USAGE,
    AgentspoolError,
    AmbiguousSessionError,
    CompressedRolloutError,
    DeclarationError,
    DeltaParseError,
    MissingExtraError,
    NotRegularFileError,
    RunIdError,
    RunNotFoundError,
    RuntimeDirError,
    SessionNotFoundError,
    SettingsError,
    StoreError,
    TranscriptGoneError,
    TranscriptReplacedError,
    UnknownProviderError,
    UnsupportedError,
    exit_code,
)

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERNAL",
    "EXIT_REFUSED",
    "EXIT_TRANSCRIPT_GONE",
    "EXIT_USAGE",
    "AgentspoolError",
    "AmbiguousSessionError",
    "CompressedRolloutError",
    "DeclarationError",
    "DeltaParseError",
    "MissingExtraError",
    "NotRegularFileError",
    "RunIdError",
    "RunNotFoundError",
    "RuntimeDirError",
    "SessionNotFoundError",
    "SettingsError",
    "StoreError",
    "TranscriptGoneError",
    "TranscriptReplacedError",
    "UnknownProviderError",
    "UnsupportedError",
    "exit_code",
]
