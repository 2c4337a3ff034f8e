"""The Codex adapter object (being built: lifecycle first)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from agentspool.adapters.codex import _lifecycle
from agentspool.adapters.seam import Capabilities, Chat, Spawn
from agentspool.spool import signature, sweep


class Codex:
    name: ClassVar[str] = "codex"
    capabilities: ClassVar[Capabilities] = Capabilities(live_signals=True)

    def setup(self, run_id: str, runtime_dir: str) -> Spawn:
        return _lifecycle.setup(run_id, runtime_dir)

    def spool_sig(self, run_id: str, runtime_dir: str) -> str:
        return signature.spool_sig(run_id, runtime_dir)

    def sweep(self, runtime_dir: str, keep: Iterable[str], *, dry_run: bool = False
              ) -> sweep.SweepReport:
        return sweep.sweep_spools(runtime_dir, keep, dry_run=dry_run)

    def locate_transcript(self, run_id: str, runtime_dir: str) -> str:
        raise NotImplementedError

    def read_chat(self, run_id: str, runtime_dir: str, transcript_path: str) -> Chat:
        raise NotImplementedError
