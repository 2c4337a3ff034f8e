"""An adapter registered from outside agentspool (see ../pyproject.toml)."""

from typing import ClassVar

from agentspool.adapters._fake_kit import Kit as LineLogKit
from agentspool.adapters.fake import ScriptedAdapter

__all__ = ["LineLog", "LineLogKit"]


class LineLog(ScriptedAdapter):
    name: ClassVar[str] = "linelog"
