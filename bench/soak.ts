/**
 * `deno task soak [--sessions N] [--minutes M]` (defaults 1,000 and 10): N concurrent client
 * sessions (nine in ten to a Streamable HTTP backend, one in ten to a stdio backend) make mixed
 * calls for M minutes through a gateway process. Prints the gateway's RSS and open file
 * descriptors every 30 s, then ends every session and counts errors and leftover processes.
 * Exits 1 on any error or orphan. Not part of CI: it runs for minutes.
 */
import { startHttpFixture } from "../tests/fixtures/fixture_server.ts";
import { startGatewayProcess } from "../tests/fixtures/gateway_process.ts";
import { mcpHeaders, openSession, post } from "../tests/fixtures/raw.ts";
import { DENO_DIR_YAML } from "../tests/fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

function flag(name: string, fallback: number): number {
  const at = Deno.args.indexOf(`--${name}`);
  return at >= 0 ? Number(Deno.args[at + 1]) : fallback;
}

const SESSIONS = flag("sessions", 1_000);
const MINUTES = flag("minutes", 10);

/** The gateway's child processes, from /proc. */
function children(pid: number): number[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/)
      .filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

function openFds(pid: number): number {
  return [...Deno.readDirSync(`/proc/${pid}/fd`)].length;
}

const backend = await startHttpFixture();
const gw = await startGatewayProcess(
  `listen: 127.0.0.1:{{PORT}}
storage: ":memory:"
logLevel: warn
audit: { enabled: false }
limits: { sessionsPerUser: ${SESSIONS * 2}, maxSessions: ${SESSIONS * 2}, sessionIdleTimeout: 30m }
rateLimits: { mcpPerUser: off, mcpPerClient: off }
servers:
  http:
    transport: streamable-http
    url: ${backend.url}
    public: true
  stdio:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    public: true
`,
);
const pid = gw.pid;

const CALLS = [
  { method: "tools/call", params: { name: "echo", arguments: { n: 1 } } },
  { method: "tools/list", params: {} },
  { method: "ping", params: {} },
];
const HTTP_CALLS = [
  { method: "tools/call", params: { name: "test_simple_text", arguments: {} } },
  { method: "tools/list", params: {} },
  { method: "resources/read", params: { uri: "test://static-text" } },
  { method: "ping", params: {} },
];

let errors = 0;
let calls = 0;
const firstErrors: string[] = [];
console.log(`opening ${SESSIONS} sessions …`);
const sessions: { url: string; id: string; stdio: boolean }[] = [];
for (let i = 0; i < SESSIONS; i += 50) {
  await Promise.all(Array.from({ length: Math.min(50, SESSIONS - i) }, async (_, j) => {
    const stdio = (i + j) % 10 === 0;
    const url = `${gw.url}/${stdio ? "stdio" : "http"}/mcp`;
    sessions.push({ url, id: await openSession(url), stdio });
  }));
}
console.log(`${sessions.length} sessions open; ${children(pid).length} backend processes`);

const deadline = Date.now() + MINUTES * 60_000;
const samples: string[] = [];
const sampler = setInterval(() => {
  const line = `${new Date().toISOString()}  rss ${rssMiB(pid).toFixed(1)} MiB  fds ${
    openFds(pid)
  }  calls ${calls}  errors ${errors}`;
  samples.push(line);
  console.log(line);
}, 30_000);

await Promise.all(sessions.map(async (session, i) => {
  let id = i * 1_000_000;
  while (Date.now() < deadline) {
    const pool = session.stdio ? CALLS : HTTP_CALLS;
    const call = pool[id % pool.length];
    const answer = await post(
      session.url,
      { jsonrpc: "2.0", id: ++id, ...call },
      mcpHeaders({ "mcp-session-id": session.id }),
    ).catch((error) => ({ status: 0, text: String(error), json: undefined }));
    calls++;
    const body = answer.json as { error?: unknown } | undefined;
    if (answer.status !== 200 || !body || body.error) {
      errors++;
      if (firstErrors.length < 10) {
        firstErrors.push(`${answer.status} ${answer.text.slice(0, 200)}`);
      }
    }
    // About one call per session every 100-200 ms: ~5-10k calls/s across 1,000 sessions.
    await new Promise((resolve) => setTimeout(resolve, 100 + (id % 100)));
  }
}));
clearInterval(sampler);

await Promise.all(sessions.map((session) =>
  fetch(session.url, {
    method: "DELETE",
    headers: mcpHeaders({ "mcp-session-id": session.id }),
  }).then((response) => response.body?.cancel())
));
await new Promise((resolve) => setTimeout(resolve, 3_000));
const orphans = children(pid).length;
const finalRss = rssMiB(pid);
const finalFds = openFds(pid);
await gw.close();
await backend.close();

console.log(`\n${SESSIONS} sessions, ${MINUTES} min: ${calls} calls, ${errors} errors`);
console.log(
  `after closing every session: rss ${
    finalRss.toFixed(1)
  } MiB, fds ${finalFds}, backend processes left ${orphans}`,
);
for (const error of firstErrors) console.log(`error: ${error}`);
Deno.exit(errors === 0 && orphans === 0 ? 0 : 1);
