"""An adapter registered from outside agentspool (see ../pyproject.toml)."""

from typing import TYPE_CHECKING, ClassVar

from agentspool.adapters._fake_kit import Kit as LineLogKit
from agentspool.adapters.fake import ScriptedAdapter

__all__ = ["LineLog", "LineLogKit"]


class LineLog(ScriptedAdapter):
    name: ClassVar[str] = "linelog"


if TYPE_CHECKING:  # what an outside package states so that mypy checks it against the seam
    from agentspool.core.seam import Adapter

    _checked: type[Adapter] = LineLog
