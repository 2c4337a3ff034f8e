// agentspool's OpenCode plugin: OpenCode's live bus events, appended to the run's spool.
//
// OpenCode has no shell hooks; a plugin's `event` handler sees every bus event, among
// them the ones nothing durable records: a permission prompt or a question form opening
// and being answered, the session going busy and idle. This file appends those events to
// the run's `events.spool` in the record framing every agentspool hook writes (the
// shared writer, rendered in at the `@spool-writer` line), so the adapter reads them
// like any hook spool. Nothing here parses or interprets an event.
//
// Armed per run: `agentspool setup opencode` writes a copy of this file into the run dir
// with ARMED set to the run, and names it in OPENCODE_CONFIG_CONTENT. Installed
// (`agentspool install opencode`): ARMED stays null, and the run is the OpenCode process
// itself, `opencode-<pid>-<start ticks>`, in the default runtime dir; a run a wrapper
// armed (AGENTSPOOL_RUN_ID in the environment) is left to the wrapper's copy.
//
// Like a hook, it never fails the agent: every fault is swallowed (and noted in the run's
// hooks.log when that can be written). Standard library only: no package to install.
import fs from "node:fs";

const ARMED = null; // {"runtimeDir": "...", "runId": "..."} in a run's own copy

const PROVIDER = "opencode";
const KEPT = new Set([
  "session.created",
  "session.status",
  "session.idle",
  "session.error",
  "session.compacted",
  "permission.asked",
  "permission.replied",
  "question.asked",
  "question.replied",
  "question.rejected",
]);
// @spool-writer

// OpenCode's database (the transcript): $OPENCODE_DB, absolute or relative to its data
// dir, else <data dir>/opencode.db, the data dir being $XDG_DATA_HOME/opencode.
function database(env) {
  const data = (env.XDG_DATA_HOME || `${env.HOME || ""}/.local/share`) + "/opencode";
  const named = env.OPENCODE_DB || "";
  if (named === ":memory:") return "";
  if (named) return named.startsWith("/") ? named : `${data}/${named}`;
  return `${data}/opencode.db`;
}

export const AgentspoolSpool = async (input) => {
  const env = process.env;
  let run;
  try {
    run = theRun(env);
  } catch {
    return {};
  }
  if (!run) return {};
  const { spool, write, fault } = openSpool(run);
  // OpenCode may call a plugin more than once per process (seen: twice at a TUI start);
  // one bus event reaches one handler, but should it reach two, it is written once.
  const shared = (globalThis.__agentspoolSpool ??= {});
  const seen = (shared[spool] ??= { last: null });

  try {
    write(
      "start",
      JSON.stringify({
        pid: process.pid,
        start: startTicks(),
        directory: input?.directory ?? "",
        worktree: input?.worktree ?? "",
        serverUrl: String(input?.serverUrl ?? ""),
        database: database(env),
      }),
    );
  } catch (error) {
    fault(error);
  }

  return {
    event: async ({ event }) => {
      try {
        if (!event || !KEPT.has(event.type) || seen.last === event) return;
        seen.last = event;
        write(event.type.replaceAll(".", "_"), JSON.stringify(event.properties ?? {}));
      } catch (error) {
        fault(error);
      }
    },
  };
};
