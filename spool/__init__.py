"""The spool protocol: how hook processes leave evidence and how readers take it back.

Layout (``docs/adr/0003-runtime-dir-layout.md``)::

    <runtime>/                  0700, owned by the user; refused otherwise
      <run_id>/                 0700, created by ``setup``; hooks never create it
        events.spool            0600, append-only records (below)
        hooks.log               0600, hook faults, capped at FAULT_LOG_CAP bytes
        <provider>.settings.json  the rendered per-run settings ``setup`` returned
      faults.log                faults of hooks whose run dir was missing
      .sweep.lock               filelock held by ``sweep_spools``
      .trash-<run_id>-<pid>-<ns>  a run being deleted: never read, finished by the next sweep

Readers trust only private dirs (``docs/adr/0013-readers-trust-only-private-dirs.md``):
the runtime dir and the run dir must be real directories of this user that neither
group nor others can write, and the spool file this user's and not writable by others;
anything else raises ``RuntimeDirError`` on every read. Readers create and repair
nothing (``setup`` creates and tightens; a reader refuses).

``<runtime>`` is ``$AGENTSPOOL_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/agentspool``, else
``<tmp>/agentspool-<uid>``. A run id is 1-128 characters of ``[A-Za-z0-9._-]`` that does
not start with ``.`` (so it can never name ``..``, a dot-file or a path).

Record format, version 1 (``docs/adr/0001-spool-record-format.md``). One record is one
``write(2)`` on an ``O_APPEND`` descriptor, so concurrent hooks never interleave::

    \\x1e AS1 <event> <mono_ns> <wall_ns> <pid> <agent_pid> <cut> <orig_len> <len> <crc>\\n
    <len bytes of payload>\\n

(no spaces around ``\\x1e``; fields are separated by single spaces). ``event`` is the
hook event name baked into the command at setup; ``mono_ns``/``wall_ns`` are
``CLOCK_MONOTONIC``/``CLOCK_REALTIME`` at the write; ``pid`` is the hook process;
``agent_pid`` the agent process when the CLI tells hooks (Claude Code's ``CLAUDE_PID``)
else 0; ``cut`` is ``-`` for a whole payload or the number of head bytes kept when an
oversized payload was cut to its head and tail; ``orig_len`` is the payload's size on
stdin; ``crc`` is the 8-hex-digit CRC-32 of the header text before it plus the payload.

Readers take records from a byte cursor. A record whose bytes are not all there yet is
left for the next read unless a whole record follows it (then it is torn: a writer died
or the disk filled mid-write) and it is skipped and counted. A record with a bad header
or CRC is skipped and counted; the reader resynchronises on the next ``\\x1eAS1``.
Nothing read from a spool is ever executed.
"""
