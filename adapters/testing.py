"""The Tier-1 conformance suite, shipped in the package (pytest is needed to run it).

Every adapter in the registry is enrolled: ``tests/adapters/test_conformance.py``
parametrizes ``AdapterConformance`` over ``enrolled()`` (the registry plus the fake). An
adapter also ships a *kit* (``KITS``) that writes small, real-shaped evidence for it —
a transcript of completed turns, and live signals that open a prompt — so the same
obligations run hermetically against every provider:

* ``transcript_path=""`` → an idle, empty chat; live signals still consulted
* a missing ``transcript_path`` → ``TranscriptGoneError`` (a ``FileNotFoundError``)
* ``runtime_dir=""`` → transcript-only: the spool is never read
* a run core marks ended reads ``ended`` and never sees the spool
* ``seq`` strictly increasing, stable across re-parses, appends and mid-line writes
* no pending dialog/approval is ever a message
* the canonical stream passes ``core.detail.assemble_session_detail``: every
  ``tool_result`` that names a ``tool_use_id`` joins its call (each kit turn holds one
  call and its result, in the provider's real shape)
* a persistence round trip (``core.store.SessionStore``) changes neither the records nor
  the assembled detail; a delta (incremental) parse is rejected there
* ``Chat.drift`` (ADR 0014) is the same on every re-read, by the same or a fresh
  adapter, and empty for the kit's evidence (it is shaped as the pinned CLI writes it)
* a dropped adapter frees its parse at once: messages and events are not tracked by the
  cycle collector (seam: ``gc=False``), so nothing holding them may sit in a cycle
* what a read handed out never changes: the messages of every read, taken line by line
  while the transcript grows, encode the same at the end
* ``spool_sig`` moves whenever a read of the located transcript would answer otherwise
  (a hook, a transcript append), and holds still while nothing changes
* with the optional ``session_at``: the session of its own transcript is named (the id
  its reads give), anything else — another provider's transcript, a JSON file that is no
  transcript, a missing file — is not; with ``read_session_with_subagents``: the
  session's own records come first, unchanged, and the whole is one complete stream
* the history index (``core.history``): a transcript indexed, reloaded from the store and
  assembled equals the assembly of a fresh parse, records and all; for an adapter that
  resumes transcripts (``capabilities.resumes_transcripts``), also when the file grows in
  pieces (torn lines included) and each piece is indexed by a fresh adapter instance, in
  small blocks, from the state the last one left
"""

from __future__ import annotations

import gc
import importlib
import os
import types
import weakref
from collections.abc import Iterator
from typing import ClassVar, Protocol

import msgspec
import pytest

from agentspool.adapters import registry
from agentspool.core.seam import Adapter, Chat, Message, TranscriptFile
from agentspool.spool.errors import DeltaParseError, TranscriptGoneError
from agentspool.spool.layout import ensure_run_dir

# Each built-in provider's kit, from the registry's table, and the fake's.
KITS = {**registry.kits(), "fake": "agentspool.adapters._fake_kit:Kit"}


class Kit(Protocol):
    def transcript(self, directory: str, turns: int) -> str:
        """Write a transcript of ``turns`` completed turns; return its path."""
        ...

    def append_turn(self, path: str) -> bytes:
        """Append one more completed turn; return the bytes appended."""
        ...

    def open_prompt(self, runtime_dir: str, run_id: str, transcript_path: str) -> None:
        """Make the run's live signals (only) show an open prompt or dialog."""
        ...


# A kit whose transcript is not a file of lines (a database) cannot have a turn cut
# mid-line; it also defines ``append_turn_in_steps(path) -> Iterator[None]``: the same
# turn as ``append_turn``, written change by change as the CLI writes it, pausing after
# each change. The tests that read a transcript while it grows then read between steps.
# Its ``transcript_file(path) -> TranscriptFile`` says how the history index lists it
# (``within``: the files that hold it).
STEPWISE = "append_turn_in_steps"


def enrolled() -> list[str]:
    """The built-in adapters and the fake (an installed adapter runs the suite through
    its own subclass of ``AdapterConformance``)."""
    return [*registry.builtin_names(), "fake"]


def load_adapter(name: str) -> Adapter:
    if name == "fake":
        from agentspool.adapters.fake import ScriptedAdapter

        return ScriptedAdapter()
    return registry.load(name)


def load_kit(name: str) -> Kit:
    target = KITS.get(name)
    if target is None:
        raise LookupError(f"adapter {name!r} ships no conformance kit: add one to KITS")
    module, _, attr = target.partition(":")
    kit: Kit = getattr(importlib.import_module(module), attr)()
    return kit


def _prompted(adapter: Adapter, kit: Kit, runtime: str, tmp_path: object) -> str:
    """A one-turn transcript, and in run ``run-1`` the hooks of a prompt waiting on an
    approval (skipped for an adapter without live signals)."""
    if not adapter.capabilities.live_signals:
        pytest.skip("adapter has no live signals")
    path = kit.transcript(str(tmp_path), 1)
    kit.open_prompt(runtime, "run-1", path)
    return path


class AdapterConformance:
    """The suite, as a base class. An adapter outside this package runs it with a
    subclass that names its adapter and kit classes::

        from agentspool.adapters.testing import AdapterConformance

        class TestMyAdapter(AdapterConformance):
            adapter_class = MyAdapter
            kit_class = MyKit

    Inside the package, a test class overrides the ``adapter_name`` fixture instead
    (``tests/adapters/test_conformance.py`` parametrizes it over ``enrolled()``).
    """

    adapter_class: ClassVar[type[Adapter] | None] = None
    kit_class: ClassVar[type[Kit] | None] = None

    @pytest.fixture
    def adapter_name(self) -> str:
        if self.adapter_class is None:
            pytest.fail("set adapter_class (and kit_class) on the conformance subclass")
        return self.adapter_class.name

    @pytest.fixture
    def adapter(self, adapter_name: str) -> Adapter:
        if self.adapter_class is not None:
            return self.adapter_class()
        return load_adapter(adapter_name)

    @pytest.fixture
    def kit(self, adapter_name: str) -> Kit:
        if self.kit_class is not None:
            return self.kit_class()
        return load_kit(adapter_name)

    @pytest.fixture
    def runtime(self, tmp_path: object) -> str:
        path = os.path.join(str(tmp_path), "runtime")
        ensure_run_dir(path, "run-1")
        return path

    def test_empty_path_is_an_idle_empty_chat(self, adapter: Adapter, runtime: str) -> None:
        chat = adapter.read_chat("run-1", runtime, "")
        assert (chat.state, chat.messages, chat.pending_dialog, chat.pending_approval) == (
            "idle",
            [],
            None,
            None,
        )

    def test_a_capability_is_the_presence_of_its_part(self, adapter: Adapter) -> None:
        caps = adapter.capabilities
        assert (adapter.installer is not None) == bool(caps.install_scopes)
        assert (adapter.trust_gate is not None) == caps.hook_trust
        assert (adapter.discovery is not None) == caps.discovers_sessions
        assert (adapter.history is not None) == caps.resumes_transcripts

    def test_a_located_read_is_the_read_of_the_located_transcript(
        self, adapter: Adapter, kit: Kit, runtime: str, tmp_path: object
    ) -> None:
        path = kit.transcript(str(tmp_path), 1)
        kit.open_prompt(runtime, "run-1", path)
        located = adapter.locate_transcript("run-1", runtime)
        assert adapter.read_chat("run-1", runtime, None) == adapter.read_chat(
            "run-1", runtime, located
        )

    def test_empty_path_still_consults_live_signals(
        self, adapter: Adapter, kit: Kit, runtime: str, tmp_path: object
    ) -> None:
        _prompted(adapter, kit, runtime, tmp_path)
        chat = adapter.read_chat("run-1", runtime, "")
        assert chat.state in ("needs_input", "question")
        assert chat.messages == []
        assert (chat.pending_approval, chat.pending_dialog) != (None, None)

    def test_missing_transcript_raises_transcript_gone(
        self, adapter: Adapter, runtime: str, tmp_path: object
    ) -> None:
        missing = os.path.join(str(tmp_path), "gone.jsonl")
        with pytest.raises(TranscriptGoneError) as info:
            adapter.read_chat("run-1", runtime, missing)
        assert isinstance(info.value, FileNotFoundError)
        assert info.value.path == missing

    def test_transcript_only_read_ignores_the_spool(
        self, adapter: Adapter, kit: Kit, runtime: str, tmp_path: object
    ) -> None:
        path = kit.transcript(str(tmp_path), 2)
        before = adapter.read_chat("run-1", "", path)
        kit.open_prompt(runtime, "run-1", path)
        after = adapter.read_chat("run-1", "", path)
        assert after.state == before.state == "needs_input"
        assert after.pending_approval is None and after.pending_dialog is None

    def test_ended_run_reads_ended_and_never_sees_the_spool(
        self, adapter: Adapter, kit: Kit, runtime: str, tmp_path: object
    ) -> None:
        from agentspool.core.reader import read_run

        path = kit.transcript(str(tmp_path), 1)
        kit.open_prompt(runtime, "run-1", path)
        live = read_run(adapter, "run-1", runtime, path)
        ended = read_run(adapter, "run-1", runtime, path, ended=True)
        assert live.state in ("needs_input", "question")
        assert ended.state == "ended"
        assert ended.pending_approval is None and ended.pending_dialog is None

    def test_completed_turns_read_as_waiting_on_the_operator(
        self, adapter: Adapter, kit: Kit, tmp_path: object
    ) -> None:
        chat = adapter.read_chat("run-1", "", kit.transcript(str(tmp_path), 2))
        assert (chat.state, chat.activity) == ("needs_input", "idle")
        assert chat.messages, "a transcript of two turns has messages"

    def test_seq_strictly_increasing_and_stable_across_reparses(
        self, adapter: Adapter, kit: Kit, tmp_path: object
    ) -> None:
        path = kit.transcript(str(tmp_path), 2)
        first = adapter.read_chat("run-1", "", path).messages
        again = load_adapter_fresh(adapter).read_chat("run-1", "", path).messages
        assert [m.seq for m in first] == sorted({m.seq for m in first})
        assert [(m.seq, m.id) for m in first] == [(m.seq, m.id) for m in again]

    def test_seq_stable_when_the_transcript_grows_mid_line(
        self, adapter: Adapter, kit: Kit, tmp_path: object
    ) -> None:
        path = kit.transcript(str(tmp_path), 1)
        first = [(m.seq, m.id) for m in adapter.read_chat("run-1", "", path).messages]
        stepwise = getattr(kit, STEPWISE, None)
        if stepwise is not None:
            steps = stepwise(path)
            for _ in range(3):  # part of the turn written: a read in the middle of it
                next(steps)
            middle = [(m.seq, m.id) for m in adapter.read_chat("run-1", "", path).messages]
            for _ in steps:
                pass
        else:
            appended = kit.append_turn(path)
            # Rewrite the appended bytes as a torn write: half now, the rest after a read.
            with open(path, "r+b") as fh:
                fh.truncate(os.path.getsize(path) - len(appended) // 2)
            middle = [(m.seq, m.id) for m in adapter.read_chat("run-1", "", path).messages]
            with open(path, "ab") as fh:
                fh.write(appended[len(appended) - len(appended) // 2 :])
        grown = adapter.read_chat("run-1", "", path).messages
        assert middle[: len(first)] == first
        assert [(m.seq, m.id) for m in grown][: len(middle)] == middle
        assert len(grown) > len(first)
        assert [m.seq for m in grown] == list(range(1, len(grown) + 1))

    def test_drift_is_stable_across_reparses_and_empty_for_real_shapes(
        self, adapter: Adapter, kit: Kit, runtime: str, tmp_path: object
    ) -> None:
        path = kit.transcript(str(tmp_path), 2)
        first = adapter.read_chat("run-1", "", path).drift
        again = adapter.read_chat("run-1", "", path).drift
        fresh = load_adapter_fresh(adapter).read_chat("run-1", "", path).drift
        assert first == again == fresh
        assert not first, first.describe()
        kit.append_turn(path)
        kit.open_prompt(runtime, "run-1", path)
        live = adapter.read_chat("run-1", runtime, path).drift
        assert live == load_adapter_fresh(adapter).read_chat("run-1", runtime, path).drift
        assert not live, live.describe()

    def test_canonical_stream_passes_assemble_session_detail(
        self, adapter: Adapter, kit: Kit, tmp_path: object
    ) -> None:
        from agentspool.core.detail import assemble_session_detail

        messages = adapter.read_chat("run-1", "", kit.transcript(str(tmp_path), 2)).messages
        assert [m.seq for m in messages] == list(range(1, len(messages) + 1))
        calls = {m.tool_use_id: m for m in messages if m.kind == "tool_call" and m.tool_use_id}
        results = [m for m in messages if m.kind == "tool_result" and m.tool_use_id]
        assert [m.id for m in results if m.tool_use_id not in calls] == []
        assert all(calls[m.tool_use_id].seq < m.seq for m in results)
        detail = assemble_session_detail(messages, include_inactive=True)
        assert [m.id for m in detail.orphan_results if m.tool_use_id] == []
        answered = [(t.call, t.result) for t in detail.tools if t.result is not None]
        assert len(answered) >= 2, "each kit turn holds one tool call and its result"
        assert all(c.tool_use_id == r.tool_use_id and c.seq < r.seq for c, r in answered)
        assert sum(detail.counts.values()) + detail.withheld == len(messages)

    def test_persistence_round_trip_keeps_records_and_detail(
        self, adapter: Adapter, kit: Kit, tmp_path: object
    ) -> None:
        from agentspool.core.detail import assemble_session_detail
        from agentspool.core.store import SessionStore

        path = kit.transcript(str(tmp_path), 1)
        database = os.path.join(str(tmp_path), "detail.sqlite")
        for _ in range(2):  # saved, then the grown transcript saved again over it
            chat = adapter.read_chat("run-1", "", path)
            tid = chat.transcript_id or "transcript"
            with SessionStore(database) as store:
                store.save(tid, chat.messages)
            with SessionStore(database) as store:
                loaded = store.load(tid)
            assert loaded == chat.messages
            for include_inactive in (False, True):
                fresh = assemble_session_detail(chat.messages, include_inactive=include_inactive)
                stored = assemble_session_detail(loaded, include_inactive=include_inactive)
                assert stored == fresh
            kit.append_turn(path)

    def test_a_delta_parse_is_rejected_by_assemble_session_detail(
        self, adapter: Adapter, kit: Kit, tmp_path: object
    ) -> None:
        from agentspool.core.detail import Parse, assemble_session_detail

        path = kit.transcript(str(tmp_path), 1)
        first = adapter.read_chat("run-1", "", path).messages
        kit.append_turn(path)
        grown = adapter.read_chat("run-1", "", path).messages
        assert len(grown) > len(first)
        with pytest.raises(DeltaParseError):
            assemble_session_detail(grown[len(first) :])
        with pytest.raises(DeltaParseError):
            assemble_session_detail(Parse(messages=grown, complete=False))
        whole = assemble_session_detail(Parse(messages=grown, complete=True))
        assert whole == assemble_session_detail(grown)

    def test_session_at_names_its_own_transcripts_and_nothing_else(
        self, adapter: Adapter, adapter_name: str, kit: Kit, tmp_path: object
    ) -> None:
        files = adapter.session_files
        if files is None:
            pytest.skip("no session_files: `agentspool show` finds its sessions by id only")
        session_at = files.session_at
        path = kit.transcript(str(tmp_path), 1)
        session = session_at(path)
        assert session is not None
        assert session.transcript_path == path
        assert session.session_id == adapter.read_chat("run-1", "", path).transcript_id
        others = []
        for name in KITS:
            if name != adapter_name and name in registry.names():
                directory = os.path.join(str(tmp_path), name)
                os.mkdir(directory)
                others.append(load_kit(name).transcript(directory, 1))
        plain = os.path.join(str(tmp_path), "plain.jsonl")
        with open(plain, "w") as fh:
            fh.write('{"hello": "world"}\n')
        for path in [*others, plain, os.path.join(str(tmp_path), "missing.jsonl")]:
            assert session_at(path) is None, path

    def test_a_session_read_with_subagents_is_its_own_records_first_and_complete(
        self, adapter: Adapter, kit: Kit, tmp_path: object
    ) -> None:
        from agentspool.core.detail import assemble_session_detail
        from agentspool.core.seam import Session

        discovery = adapter.discovery
        if discovery is None:
            pytest.skip("no discovery: shown with its own records only")
        session = Session(session_id="run-1", transcript_path=kit.transcript(str(tmp_path), 2))
        whole = discovery.read_session_with_subagents(session)
        own = discovery.read_session(session).messages
        assert whole.messages[: len(own)] == own
        assemble_session_detail(whole.messages)  # seq 1…n: one complete parse

    def test_a_dropped_adapter_frees_its_parse_at_once(
        self, adapter: Adapter, kit: Kit, tmp_path: object
    ) -> None:
        reader = load_adapter_fresh(adapter)
        assert reader.read_chat("run-1", "", kit.transcript(str(tmp_path), 2)).messages
        owned = [weakref.ref(obj) for obj in _owned_objects(reader)]  # none if it keeps none
        gc.disable()
        try:
            del reader
            assert [type(r()).__name__ for r in owned if r() is not None] == []
        finally:
            gc.enable()

    def test_what_a_read_handed_out_never_changes(
        self, adapter: Adapter, kit: Kit, tmp_path: object
    ) -> None:
        path = kit.transcript(str(tmp_path), 1)
        handed: list[tuple[Chat, bytes]] = []

        def hand_out() -> None:
            chat = adapter.read_chat("run-1", "", path)
            handed.append((chat, msgspec.json.encode(chat)))

        stepwise = getattr(kit, STEPWISE, None)
        if stepwise is not None:
            hand_out()
            for _ in stepwise(path):
                hand_out()
        else:
            appended = kit.append_turn(path)
            os.truncate(path, os.path.getsize(path) - len(appended))
            for line in [*appended.splitlines(keepends=True), b""]:
                hand_out()
                with open(path, "ab") as fh:
                    fh.write(line)
        assert len(handed[-1][0].messages) > len(handed[0][0].messages)
        assert [msgspec.json.encode(chat) for chat, _ in handed] == [b for _, b in handed]

    def test_spool_sig_moves_whenever_a_read_would_answer_otherwise(
        self, adapter: Adapter, kit: Kit, runtime: str, tmp_path: object
    ) -> None:
        path = _prompted(adapter, kit, runtime, tmp_path)  # its hooks name the transcript

        def observe() -> tuple[str, bytes]:
            located = adapter.locate_transcript("run-1", runtime)
            assert located == path
            sig = adapter.spool_sig("run-1", runtime)
            return sig, answer(adapter.read_chat("run-1", runtime, located))

        observe()
        first, again = observe(), observe()
        assert again == first, "nothing changed: neither did the signature"
        kit.append_turn(path)
        grown = observe()
        assert grown[1] != first[1], "a turn more is another answer"
        assert grown[0] != first[0]
        kit.open_prompt(runtime, "run-1", path)
        prompted = observe()
        assert prompted[0] != grown[0] or prompted[1] == grown[1]

    def test_an_indexed_session_reloads_as_a_fresh_parse(
        self, adapter: Adapter, kit: Kit, tmp_path: object
    ) -> None:
        path = kit.transcript(str(tmp_path), 2)
        database = os.path.join(str(tmp_path), "history.sqlite")
        listed = getattr(kit, "transcript_file", None)
        file = listed(path) if listed is not None else TranscriptFile(path=path)
        verdicts, loaded = _index_and_reload(database, adapter, path, file=file)
        fresh = load_adapter_fresh(adapter).read_chat("run-1", "", path).messages
        assert verdicts == ["new"]
        _assert_same_session(loaded, fresh)
        again, reloaded = _index_and_reload(database, load_adapter_fresh(adapter), path, file=file)
        assert again == ["unchanged"] and reloaded == loaded

    def test_an_index_resumed_piece_by_piece_equals_a_fresh_parse(
        self, adapter: Adapter, kit: Kit, tmp_path: object
    ) -> None:
        if not adapter.capabilities.resumes_transcripts:
            pytest.skip("adapter does not resume transcripts: indexed by a whole re-read")
        path = kit.transcript(str(tmp_path), 1)
        grown = b"".join(kit.append_turn(path) for _ in range(3))
        os.truncate(path, os.path.getsize(path) - len(grown))
        database = os.path.join(str(tmp_path), "history.sqlite")
        verdicts, loaded = _index_and_reload(database, load_adapter_fresh(adapter), path)
        # Pieces that end mid-line, on a line's end, and a single byte.
        cuts = sorted({len(grown) // 7, len(grown) // 3, len(grown) // 3 + 1, len(grown) // 2})
        cuts.append(len(grown))
        done = 0
        for cut in cuts:
            with open(path, "ab") as fh:
                fh.write(grown[done:cut])
            done = cut
            more, loaded = _index_and_reload(database, load_adapter_fresh(adapter), path, chunk=97)
            verdicts += more
            fresh = load_adapter_fresh(adapter).read_chat("run-1", "", path).messages
            _assert_same_session(loaded, fresh)
        assert verdicts == ["new"] + ["appended"] * len(cuts), "each piece resumed"


def _index_and_reload(
    database: str,
    adapter: Adapter,
    path: str,
    *,
    chunk: int = 1 << 20,
    file: TranscriptFile | None = None,
) -> tuple[list[str], list[Message]]:
    from agentspool.core.history import index_file
    from agentspool.core.store import SessionStore

    with SessionStore(database) as store:
        file = file or TranscriptFile(path=path)
        verdict, _ = index_file(store, adapter, file, chunk=chunk)
        (session,) = store.find_sessions(path)
        assert session.provider == adapter.name and session.records >= 1
    with SessionStore(database) as store:  # read back through a new connection
        return [verdict], store.records(session.id)


def _assert_same_session(loaded: list[Message], fresh: list[Message]) -> None:
    from agentspool.core.detail import assemble_session_detail

    assert loaded == fresh
    for include_inactive in (False, True):
        assert assemble_session_detail(
            loaded, include_inactive=include_inactive
        ) == assemble_session_detail(fresh, include_inactive=include_inactive)


def answer(chat: Chat) -> bytes:
    """A read's answer, comparable across reads: evidence times aside (a dead process's
    end is stamped when it is noticed), everything ``read_chat`` returned."""
    evidence = [msgspec.structs.replace(e, at=0.0) for e in chat.evidence]
    return msgspec.json.encode(msgspec.structs.replace(chat, evidence=evidence))


# Shared, not owned: walking into a function's globals would reach the whole program.
_NOT_OWNED = (type, types.ModuleType, types.FunctionType, types.MethodType)


def _owned_objects(root: object) -> Iterator[object]:
    """Instances of agentspool's own classes reachable from ``root`` that a weak
    reference can watch (views, parsers, followers, mergers)."""
    seen, todo = {id(root)}, [root]
    while todo:
        for child in gc.get_referents(todo.pop()):
            if id(child) in seen or isinstance(child, _NOT_OWNED):
                continue
            seen.add(id(child))
            todo.append(child)
            cls = type(child)
            if cls.__module__.startswith("agentspool.") and hasattr(cls, "__weakref__"):
                yield child


def load_adapter_fresh(adapter: Adapter) -> Adapter:
    """A new instance of the same adapter class: no parse state shared with ``adapter``."""
    return type(adapter)()
