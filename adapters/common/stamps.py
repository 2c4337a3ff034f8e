"""Transcript timestamps → evidence time.

Both CLIs stamp records ``2026-11-29T23:50:13.987Z``. A transcript holds tens of
thousands of stamps, mostly within a few minutes of each other, so each minute
(``2026-11-29T23:50:``) is parsed once and cached; the seconds are added as a float.
"""

from __future__ import annotations

from datetime import datetime

_MINUTES: dict[str, float] = {}
_MINUTES_KEPT = 4096  # a long-lived reader must not grow without bound


def epoch_seconds(stamp: str | None) -> float:
    """Seconds since the epoch; 0.0 for a missing or unreadable stamp."""
    if not stamp:
        return 0.0
    base = _MINUTES.get(stamp[:17])
    if base is not None and stamp[-1:] == "Z":
        try:
            return base + float(stamp[17:-1])
        except ValueError:
            return 0.0
    return _parse(stamp)


def _parse(stamp: str) -> float:
    try:
        if stamp[-1:] != "Z" or len(stamp) < 20 or stamp[16] != ":":
            return datetime.fromisoformat(stamp).timestamp()
        base = datetime.fromisoformat(stamp[:16] + ":00+00:00").timestamp()
        seconds = float(stamp[17:-1])
    except ValueError:
        return 0.0
    if len(_MINUTES) >= _MINUTES_KEPT:
        _MINUTES.clear()
    _MINUTES[stamp[:17]] = base
    return base + seconds


def iso_stamp(at: float) -> str:
    """Epoch seconds → a stamp as the CLIs write them (``2026-11-29T23:50:13.987Z``)."""
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at * 1000) % 1000:03d}Z"


class StampClock:
    """A conformance kit's clock: ten minutes ago, moving ``step`` seconds a reading, so
    the records a kit writes are stamped in order and apart."""

    def __init__(self, step: float) -> None:
        import time

        self.at = time.time() - 600
        self._step = step

    def tick(self) -> str:
        self.at += self._step
        return iso_stamp(self.at)
