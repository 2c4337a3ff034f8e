// agentspool's spool writer for the plugins and extensions it ships (OpenCode, Pi): the
// record framing every agentspool hook writes (one write(2) per record on an O_APPEND
// descriptor: magic, header, payload, CRC-32; spool/__init__.py), the checks a hook makes
// before it writes (ADR 0013, 0015, 0037), and the run the script records to. Rendered
// into each script in place of its `// @spool-writer` line, after the script's own
// `import fs from "node:fs"`, `const ARMED` and `const PROVIDER`.
const MAX_PAYLOAD = 64 * 1024;
const HEAD_BYTES = 48 * 1024;
const FAULT_LOG_CAP = 64 * 1024;
const SWEEP_MARK = 0o1000;
const C = fs.constants;
// O_NONBLOCK: a FIFO planted where a file should be would block the open, and OpenCode
// with it, until someone read it; the fstat after the open refuses all but a regular file.
const APPEND = C.O_WRONLY | C.O_APPEND | C.O_CREAT | C.O_NOFOLLOW | C.O_CLOEXEC | C.O_NONBLOCK;

const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

function crc32(bytes, crc = 0) {
  let c = ~crc;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

// /proc/self/stat field 22: the start time in clock ticks since boot. With the pid it
// names this process for good (a reused pid has another start time).
function startTicks() {
  const stat = fs.readFileSync("/proc/self/stat", "latin1");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
}

// The header's monotonic stamp: the boot clock (/proc/uptime) read once, advanced by
// this runtime's own high-resolution clock (which counts from the process start here).
const BOOT_NS = (() => {
  try {
    const up = fs.readFileSync("/proc/uptime", "latin1").split(" ")[0];
    return BigInt(Math.round(Number(up) * 1e9)) - process.hrtime.bigint();
  } catch {
    return 0n;
  }
})();

function absolute(path) {
  return path.startsWith("/") ? path : process.cwd().replace(/\/$/, "") + "/" + path;
}

// The rule spool.write.default_runtime_dir implements for the hooks and the readers.
function defaultRuntimeDir(env) {
  if (env.AGENTSPOOL_RUNTIME_DIR) return absolute(env.AGENTSPOOL_RUNTIME_DIR);
  const xdg = env.XDG_RUNTIME_DIR || "";
  if (xdg.startsWith("/")) {
    try {
      if (fs.statSync(xdg).isDirectory()) return xdg.replace(/\/+$/, "") + "/agentspool";
    } catch {}
  }
  const tmp = absolute(env.TMPDIR || "/tmp").replace(/\/+$/, "");
  return `${tmp}/agentspool-${process.getuid()}`;
}

// A directory this user owns that nobody else may write to (ADR 0013), and that no sweep
// is taking (ADR 0015); `closed`: nobody else may even enter it (a run dir).
function checkDir(path, closed) {
  const st = fs.lstatSync(path);
  if (!st.isDirectory()) throw new Error(`${path}: not a directory`);
  if (st.uid !== process.getuid()) throw new Error(`${path}: owned by uid ${st.uid}`);
  if (st.mode & (closed ? 0o077 : 0o022)) throw new Error(`${path}: not private`);
  if (closed && st.mode & SWEEP_MARK) throw new Error(`${path}: being swept`);
}

function header(event, payload, origLen, cut, pid) {
  const mono = BOOT_NS + process.hrtime.bigint();
  const wall = BigInt(Date.now()) * 1000000n;
  const text =
    `AS1 ${event} ${mono} ${wall} ${pid} ${pid} ${cut < 0 ? "-" : cut} ${origLen} ` +
    `${payload.length}`;
  return Buffer.from(text, "latin1");
}

function frame(event, body, pid) {
  let payload = Buffer.from(body, "utf8");
  const origLen = payload.length;
  let cut = -1;
  if (payload.length > MAX_PAYLOAD) {
    // Cut like a hook cuts: the identifying fields sit before or after the one huge value.
    payload = Buffer.concat([
      payload.subarray(0, HEAD_BYTES),
      payload.subarray(payload.length - (MAX_PAYLOAD - HEAD_BYTES)),
    ]);
    cut = HEAD_BYTES;
  }
  const head = header(event, payload, origLen, cut, pid);
  const crc = crc32(payload, crc32(head)).toString(16).padStart(8, "0");
  return Buffer.concat([
    Buffer.from("\x1e", "latin1"),
    head,
    Buffer.from(` ${crc}\n`, "latin1"),
    payload,
    Buffer.from("\n", "latin1"),
  ]);
}

// Append to this user's own regular file (not a FIFO, a device, another's file); `cap`:
// only while it holds fewer bytes.
function appendTo(path, data, cap = Infinity) {
  const fd = fs.openSync(path, APPEND, 0o600);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new Error(`${path}: not a regular file`);
    if (st.uid !== process.getuid() || st.mode & 0o022) throw new Error(`${path}: not private`);
    if (st.size < cap) fs.writeSync(fd, data);
  } finally {
    fs.closeSync(fd);
  }
}

// A fault is noted in the run's hooks.log only when both dirs pass the check a record
// must pass (ADR 0013): a line written into a dir another account controls is evidence
// written there, and its hooks.log may be anything that account put there.
function logFault(runtimeDir, runDir, error) {
  try {
    checkDir(runtimeDir, false);
    checkDir(runDir, true);
    const line = `${(Date.now() / 1000).toFixed(3)} pid=${process.pid} plugin ${error}`;
    // One line whatever the error says (control characters escaped).
    const hex = (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`;
    const safe = line.replace(/[\x00-\x1f\x7f]/g, hex);
    appendTo(`${runDir}/hooks.log`, Buffer.from(`${safe}\n`, "utf8"), FAULT_LOG_CAP);
  } catch {}
}

// The run this process records to: [runtime dir, run id], or null to record nothing.
function theRun(env) {
  if (ARMED) return [ARMED.runtimeDir, ARMED.runId];
  if (env.AGENTSPOOL_RUN_ID) return null; // a wrapper armed this run: its copy records it
  return [defaultRuntimeDir(env), `${PROVIDER}-${process.pid}-${startTicks()}`];
}

function makeDir(path) {
  try {
    fs.mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if (error.code !== "EEXIST") throw error;
  }
}

// The writer of `run` ([runtime dir, run id]): `write(event, body)` appends one record,
// `fault(error)` notes one in the run's hooks.log. Neither ever throws.
function openSpool(run) {
  const [runtimeDir, runId] = run;
  const runDir = `${runtimeDir}/${runId}`;
  const spool = `${runDir}/events.spool`;
  const fault = (error) => logFault(runtimeDir, runDir, error);
  function write(event, body) {
    try {
      // Only an installed script creates its run (ADR 0017), and only inside a runtime
      // dir that passed the check: never a dir in one another account made first.
      if (!ARMED) makeDir(runtimeDir);
      checkDir(runtimeDir, false);
      if (!ARMED) makeDir(runDir);
      checkDir(runDir, true);
      appendTo(spool, frame(event, body, process.pid));
    } catch (error) {
      fault(error);
    }
  }
  return { spool, write, fault };
}
