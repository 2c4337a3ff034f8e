// agentspool's Pi extension: Pi's extension events, appended to the run's spool, and the
// confirm dialog that is Pi's one permission prompt.
//
// Pi runs no shell hooks; it loads extensions (`pi -e <file>`, or every file in
// `<agent dir>/extensions/`) and hands them its events. This one appends the events that
// carry a run's state — a session starting and shutting down, the agent's loop starting
// and ending, a tool's execution starting and ending — to the run's `events.spool` in
// the record framing every agentspool hook writes (the shared writer, rendered in at the
// `@spool-writer` line). Nothing here interprets an event beyond picking its fields.
//
// Pi asks no permission of its own (0.73.1: "no permission popups"). This extension asks
// one before every `bash` call while Pi has a UI to ask with (`ctx.hasUI`: the TUI, and
// RPC mode's dialog protocol): a Yes/No confirm, spooled as `permission_asked` when it
// opens and `permission_replied` when it is answered; No (or Esc) blocks the call. In
// `-p` and `--mode json` nothing is asked: the call runs, as Pi runs it. A run's
// environment can turn the dialog off: AGENTSPOOL_PI_CONFIRM=off.
//
// Armed per run: `agentspool setup pi` writes a copy of this file into the run dir with
// ARMED set to the run, and passes it with `-e`. Installed (`agentspool install pi`): a
// copy in Pi's extensions folder, ARMED null, and the run is the Pi process itself,
// `pi-<pid>-<start ticks>`, in the default runtime dir; a run a wrapper armed
// (AGENTSPOOL_RUN_ID in the environment) is left to the wrapper's copy, which asks.
//
// Like a hook, it never fails the agent: every fault is swallowed (and noted in the run's
// hooks.log when that can be written). Standard library only: no package to install.
import fs from "node:fs";

const ARMED = null; // {"runtimeDir": "...", "runId": "..."} in a run's own copy

const PROVIDER = "pi";
const CONFIRM_ENV = "AGENTSPOOL_PI_CONFIRM";
const GATED_TOOL = "bash";

// @spool-writer

function sessionOf(ctx) {
  try {
    return ctx.sessionManager.getSessionId() ?? "";
  } catch {
    return "";
  }
}

function sessionFileOf(ctx) {
  try {
    return ctx.sessionManager.getSessionFile() ?? "";
  } catch {
    return "";
  }
}

// The stop reason of the last assistant message of the loop (`stop`, `aborted`, …).
function stopReasonOf(messages) {
  for (let i = (messages?.length ?? 0) - 1; i >= 0; i--) {
    if (messages[i]?.role === "assistant") return String(messages[i].stopReason ?? "");
  }
  return "";
}

export default function agentspoolSpool(pi) {
  const env = process.env;
  let run;
  try {
    run = theRun(env);
  } catch {
    return;
  }
  if (!run) return;
  const { write, fault } = openSpool(run);
  const spooled = (event, fields) => (ev, ctx) => {
    try {
      write(event, JSON.stringify({ sessionId: sessionOf(ctx), ...fields(ev ?? {}, ctx) }));
    } catch (error) {
      fault(error);
    }
  };

  pi.on(
    "session_start",
    spooled("session_start", (ev, ctx) => ({
      reason: String(ev.reason ?? ""),
      previousSessionFile: String(ev.previousSessionFile ?? ""),
      sessionFile: sessionFileOf(ctx),
      cwd: String(ctx?.cwd ?? ""),
      pid: process.pid,
      start: startTicks(),
    })),
  );
  pi.on("agent_start", spooled("agent_start", () => ({})));
  pi.on("agent_end", spooled("agent_end", (ev) => ({ stopReason: stopReasonOf(ev.messages) })));
  pi.on(
    "tool_execution_start",
    spooled("tool_execution_start", (ev) => ({
      toolCallId: String(ev.toolCallId ?? ""),
      toolName: String(ev.toolName ?? ""),
      args: ev.args ?? {},
    })),
  );
  pi.on(
    "tool_execution_end",
    spooled("tool_execution_end", (ev) => ({
      toolCallId: String(ev.toolCallId ?? ""),
      toolName: String(ev.toolName ?? ""),
      isError: Boolean(ev.isError),
    })),
  );
  pi.on(
    "session_shutdown",
    spooled("session_shutdown", (ev) => ({
      reason: String(ev.reason ?? ""),
      targetSessionFile: String(ev.targetSessionFile ?? ""),
    })),
  );

  if (env[CONFIRM_ENV] === "off") return;
  const asked = spooled("permission_asked", (ev) => ({
    toolCallId: String(ev.toolCallId ?? ""),
    toolName: String(ev.toolName ?? ""),
    input: ev.input ?? {},
  }));
  pi.on("tool_call", async (ev, ctx) => {
    if (ev?.toolName !== GATED_TOOL || !ctx?.hasUI) return undefined;
    asked(ev, ctx);
    // A dialog that cannot open gates nothing: the call runs, as Pi would run it.
    let answer = "error";
    try {
      answer = (await ctx.ui.confirm("Run command?", String(ev.input?.command ?? ""))) ? "yes" : "no";
    } catch (error) {
      fault(error);
    }
    const toolCallId = String(ev.toolCallId ?? "");
    spooled("permission_replied", () => ({ toolCallId, answer }))(ev, ctx);
    return answer === "no" ? { block: true, reason: "Blocked by user" } : undefined;
  });
}
