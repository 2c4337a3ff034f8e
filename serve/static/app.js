// agentspool serve's page: the live list, a run, a session, usage. No build step, no
// library. Every text that comes from a transcript is set with textContent (never as
// HTML). The list is kept from the event stream (/api/v1/events), not a refresh timer.
"use strict";

const API = "/api/v1";
const URGENCY = { question: 0, needs_input: 1, working: 2, idle: 3, ended: 4 };
const runs = new Map(); // key → the run's latest RunEvent
const endedHere = new Set(); // keys seen to end while this page was open: listed last
let server = { conversations: true };
let drawQueued = false;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "text") node.textContent = value;
    else if (name === "class") node.className = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

async function getJson(path) {
  const response = await fetch(API + path, { headers: { Accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

// What the run waits on, in words a person acts on.
function waitsOn(run) {
  if (run.state === "ended") return "ended";
  const approval = run.pending_approval;
  if (approval) {
    const input = approval.tool_input || {};
    const what = input.command || input.file_path || input.path || input.url || "";
    return `approve ${approval.tool_name}` + (what ? `: ${what}` : "");
  }
  const dialog = run.pending_dialog;
  if (dialog) {
    if (dialog.kind === "plan_approval") return "approve the plan";
    const question = dialog.prompt || (dialog.questions[0] || {}).prompt || "";
    return question ? `answer: ${question}` : "answer a question";
  }
  if (run.state === "needs_input") return "your turn";
  if (run.state === "question") return "answer a question";
  if (run.state === "working") return "working";
  return "idle";
}

function ago(since) {
  if (!since) return "-";
  const seconds = Math.max(0, Date.now() / 1000 - since);
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) {
    if (seconds >= size) return `${Math.floor(seconds / size)}${unit}`;
  }
  return `${Math.floor(seconds)}s`;
}

function when(at) {
  return at ? new Date(at * 1000).toLocaleTimeString() : "-";
}

// -- the live list ---------------------------------------------------------------------

function listed() {
  const out = [];
  for (const [key, run] of runs) {
    if (run.state !== "ended" || endedHere.has(key)) out.push(run);
  }
  const rank = (r) => URGENCY[r.state] ?? 9;
  return out.sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (a.since || Infinity) - (b.since || Infinity) ||
      (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0)
  );
}

function drawRuns() {
  drawQueued = false;
  const body = document.querySelector("#runs tbody");
  const shown = listed();
  body.replaceChildren(
    ...shown.map((run) => {
      const task = run.task_state + (run.task_reason ? ` (${run.task_reason})` : "");
      const name = run.run_id || `(no hooks) ${run.session_id.slice(0, 12)}`;
      const row = el(
        "tr",
        { class: `state-${run.state}`, "data-key": run.key, "data-state": run.state },
        el("td", { text: run.provider }),
        el("td", { class: "run", text: name }),
        el("td", { class: "waits", text: waitsOn(run) }),
        el("td", { class: "num", text: ago(run.since) }),
        el("td", { text: task }),
        el("td", { text: run.cwd }),
        el("td", { text: run.title })
      );
      row.addEventListener("click", () => {
        location.hash = run.run_id
          ? `#/run/${encodeURIComponent(run.run_id)}`
          : `#/session/${encodeURIComponent(run.session_id)}`;
      });
      return row;
    })
  );
  document.getElementById("count").textContent = `${shown.length} live`;
  document.getElementById("no-runs").hidden = shown.length > 0;
}

function queueDraw() {
  if (!drawQueued) {
    drawQueued = true;
    requestAnimationFrame(drawRuns);
  }
}

function follow() {
  const live = document.getElementById("live");
  const stream = new EventSource(`${API}/events`);
  stream.addEventListener("reset", () => {
    runs.clear();
    endedHere.clear();
  });
  stream.addEventListener("transition", (message) => {
    const event = JSON.parse(message.data);
    if (event.event === "gone") {
      runs.delete(event.key);
      endedHere.delete(event.key);
    } else {
      if (event.previous && event.previous !== "ended" && event.state === "ended") {
        endedHere.add(event.key);
      }
      runs.set(event.key, event);
    }
    queueDraw();
    if (current.key === event.key && current.refresh) current.refresh();
  });
  stream.addEventListener("ready", queueDraw);
  stream.addEventListener("open", () => {
    live.textContent = "live";
    live.className = "live on";
  });
  stream.addEventListener("error", () => {
    live.textContent = "reconnecting";
    live.className = "live off";
  });
}

// -- a run -----------------------------------------------------------------------------

function pendingBlock(chat) {
  const approval = chat.pending_approval;
  if (approval) {
    const input = approval.tool_input || {};
    return el(
      "div",
      { class: "waiting approval" },
      el("strong", { text: `approve ${approval.tool_name}` }),
      Object.keys(input).length
        ? el("pre", { class: "command", text: input.command || JSON.stringify(input, null, 2) })
        : null
    );
  }
  const dialog = chat.pending_dialog;
  if (dialog) {
    const questions = dialog.questions.length
      ? dialog.questions
      : [{ prompt: dialog.prompt, options: dialog.options, header: "" }];
    return el(
      "div",
      { class: "waiting dialog" },
      el("strong", { text: dialog.kind === "plan_approval" ? "approve the plan" : "answer" }),
      ...questions.map((q) =>
        el(
          "div",
          { class: "question" },
          el("p", { text: q.prompt }),
          el(
            "ol",
            {},
            ...q.options.map((o) =>
              el("li", { text: o.label + (o.description ? ` — ${o.description}` : "") })
            )
          )
        )
      )
    );
  }
  return null;
}

function messageBlock(message) {
  const who =
    message.role +
    (message.kind !== "text" ? ` · ${message.kind}` : "") +
    (message.tool_name ? ` · ${message.tool_name}` : "") +
    (message.timestamp ? ` · ${message.timestamp}` : "");
  let text = message.text;
  if (!text && message.tool_input) text = JSON.stringify(message.tool_input);
  return el(
    "div",
    { class: `msg role-${message.role} kind-${message.kind}` },
    el("div", { class: "who", text: who }),
    el("pre", { class: message.is_error ? "error" : "", text: text || "" })
  );
}

async function showRun(runId) {
  const view = document.getElementById("run-view");
  const key = [...runs.keys()].find((k) => k.endsWith(`:${runId}`) && !k.includes(":session:"));
  current = { key, refresh: () => showRun(runId) };
  let chat;
  try {
    chat = await getJson(`/runs/${encodeURIComponent(runId)}`);
  } catch (error) {
    view.replaceChildren(el("h1", { text: runId }), el("p", { class: "error", text: error.message }));
    return;
  }
  const run = runs.get(key) || { state: chat.state, ...chat };
  const task = chat.task_state + (chat.task_reason ? ` (${chat.task_reason})` : "");
  const last = chat.messages.filter((m) => m.visibility === "visible").slice(-12);
  const session = chat.transcript_id
    ? el("a", { href: `#/session/${encodeURIComponent(chat.transcript_id)}`, text: "the whole conversation" })
    : null;
  view.replaceChildren(
    el("h1", { text: runId }, " ", el("small", { text: `${run.provider || ""} ${chat.state}` })),
    el("p", { class: "waits", text: waitsOn({ ...run, ...chat }) }),
    el("p", { class: "quiet", text: `activity ${chat.activity}, task ${task}; ${chat.cwd}` }),
    pendingBlock(chat),
    el("h2", { text: "Last messages" }),
    server.conversations
      ? el("div", { class: "messages" }, ...last.map(messageBlock))
      : el("p", { class: "quiet", text: "not served (--no-conversations)" }),
    session,
    el("h2", { text: "Evidence" }),
    el(
      "table",
      { class: "evidence" },
      el("tbody", {}, ...chat.evidence.map((e) =>
        el("tr", {}, el("td", { text: when(e.at) }), el("td", { text: e.source }), el("td", { text: e.detail }))
      ))
    )
  );
}

// -- a session -------------------------------------------------------------------------

async function showSession(ref) {
  const view = document.getElementById("session-view");
  current = { key: null, refresh: null };
  view.replaceChildren(el("h1", { text: ref }), el("p", { class: "quiet", text: "reading…" }));
  let detail;
  try {
    detail = await getJson(`/sessions/${encodeURIComponent(ref)}`);
  } catch (error) {
    view.replaceChildren(el("h1", { text: ref }), el("p", { class: "error", text: error.message }));
    return;
  }
  const usage = detail.usage;
  view.replaceChildren(
    el("h1", { text: ref }),
    el("p", {
      class: "quiet",
      text:
        `${detail.conversation.length} records, ${detail.tools.length} tool calls, ` +
        `${detail.subagents.length} subagents; tokens in ${usage.input_tokens}, out ${usage.output_tokens}`,
    }),
    el("div", { class: "messages" }, ...detail.conversation.map(messageBlock))
  );
}

// -- usage -----------------------------------------------------------------------------

async function showUsage(by) {
  const out = document.getElementById("usage");
  current = { key: null, refresh: null };
  for (const link of document.querySelectorAll(".choices a")) {
    link.classList.toggle("chosen", link.getAttribute("href") === `#/usage/${by}`);
  }
  let report;
  try {
    report = await getJson(`/usage?by=${encodeURIComponent(by)}`);
  } catch (error) {
    out.replaceChildren(el("p", { class: "error", text: error.message }));
    return;
  }
  const cost = (row) => (row.cost_usd === null ? "no price" : `$${row.cost_usd.toFixed(2)}`);
  const numbers = (row) =>
    [row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens, row.total_tokens].map(
      (n) => el("td", { class: "num", text: n.toLocaleString() })
    );
  const heads = ["input", "output", "cache read", "cache write", "total", "cost"];
  out.replaceChildren(
    el(
      "table",
      { class: "usage" },
      el("thead", {}, el("tr", {}, el("th", { text: by }), ...heads.map((h) => el("th", { class: "num", text: h })))),
      el(
        "tbody",
        {},
        ...report.rows.map((row) =>
          el("tr", {}, el("td", { text: row.key || "(not named)" }), ...numbers(row), el("td", { class: "num", text: cost(row) }))
        )
      ),
      el("tfoot", {}, el("tr", {}, el("th", { text: "total" }), ...numbers(report.total), el("th", { class: "num", text: cost(report.total) })))
    ),
    el("p", { class: "quiet", text: `prices as of ${report.prices_taken}; days in ${report.timezone} time` })
  );
}

// -- routing ---------------------------------------------------------------------------

let current = { key: null, refresh: null };

function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const views = { runs: "runs-view", run: "run-view", session: "session-view", usage: "usage-view" };
  const name = parts[0] in views ? parts[0] : "runs";
  for (const [view, id] of Object.entries(views)) document.getElementById(id).hidden = view !== name;
  if (name === "run") showRun(parts[1] || "");
  else if (name === "session") showSession(parts[1] || "");
  else if (name === "usage") showUsage(parts[1] || "day");
  else current = { key: null, refresh: null };
}

async function start() {
  try {
    server = await getJson("/server");
  } catch (error) {
    document.getElementById("live").textContent = error.message;
  }
  window.addEventListener("hashchange", route);
  route();
  follow();
}

start();
