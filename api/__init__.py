"""agentspool: know what each coding-agent CLI run is doing, from evidence.

The public surface is imported lazily (a module-level ``__getattr__``): hooks import
through this package, and they must not pay for msgspec on every tool call.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentspool.adapters.seam import Chat, Spawn
    from agentspool.api import (
        locate_transcript,
        read_chat,
        setup,
        spool_sig,
        sweep_spools,
    )

__version__ = "0.1.0"
__all__ = [
    "Chat",
    "Spawn",
    "__version__",
    "locate_transcript",
    "read_chat",
    "setup",
    "spool_sig",
    "sweep_spools",
]

_LAZY = {
    "Chat": "agentspool.adapters.seam",
    "Spawn": "agentspool.adapters.seam",
    "locate_transcript": "agentspool.api",
    "read_chat": "agentspool.api",
    "setup": "agentspool.api",
    "spool_sig": "agentspool.api",
    "sweep_spools": "agentspool.api",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentspool' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return list(__all__)
