/**
 * The fuzz run: a real gateway (OAuth with a real IdP, HTTP fixture backends, an aggregate)
 * answers seeded hostile requests in-process, and damaged configuration files are parsed.
 * A failure is a thrown error, a hang, or a 5xx the docs do not explain (only 502, a backend
 * that cannot be reached, is). Each case has its own seed, so a failure replays alone.
 */
import { ConfigError } from "../../src/config/issues.ts";
import { parseConfigText } from "../../src/config/load.ts";
import { startHttpFixture } from "../fixtures/fixture_server.ts";
import { listenForGateway, type TestGateway } from "../fixtures/gateway.ts";
import { startIdp } from "../fixtures/idp.ts";
import { idpSection, TEST_MASTER_SECRET } from "../fixtures/oauth_gateway.ts";
import { configText, mcpRequest, oauthRequest, type Target } from "./cases.ts";
import { Random } from "./random.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const TOKEN = "fuzz-static-token-0123456789";
/** A case that takes longer than this is a hang. */
const CASE_LIMIT_MS = 10_000;

export interface FuzzReport {
  seed: number;
  cases: number;
  /** Responses by status, and config files accepted or refused. */
  outcomes: Record<string, number>;
  failures: string[];
}

export interface FuzzTarget {
  gw: TestGateway;
  target: Target;
  configSamples: string[];
  close(): Promise<void>;
}

export async function startFuzzTarget(): Promise<FuzzTarget> {
  const socket = await listenForGateway();
  const port = socket.port;
  const idp = await startIdp([`${socket.url}/oauth/callback`]);
  const backend = await startHttpFixture();
  const yaml = `
baseUrl: http://127.0.0.1:{{PORT}}
secret: ${TEST_MASTER_SECRET}
limits: { sessionsPerUser: 100, maxSessions: 300, sessionIdleTimeout: 30s, requestTimeout: 2s, maxMessageBytes: 1MiB }
# The fuzzer must reach past the limits; tests/rate_limit_test.ts covers them.
rateLimits: { mcpPerUser: off, mcpPerClient: off, oauthPerAddress: off, tokenPerClient: off, tokenFailuresPerAddress: off, registerPerAddress: off }
audit: { arguments: true }
servers:
  open:
    transport: streamable-http
    url: ${backend.url}
    public: true
  guarded:
    transport: streamable-http
    url: ${backend.url}
    headers: { X-User: "{{user.id}}" }
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
  agg:
    transport: aggregate
    servers: [open, guarded]
    public: true
oauth:
${idpSection(idp)}
`;
  const gw = await socket.start(yaml, { IDP_SECRET: idp.clientSecret });
  return {
    gw,
    target: { base: gw.url, token: TOKEN, sessions: [], clients: [] },
    configSamples: [
      yaml.replaceAll("{{PORT}}", String(port)),
      await Deno.readTextFile(`${ROOT}config.yaml`),
    ],
    close: async () => {
      await gw.close();
      await backend.close();
      await idp.close();
    },
  };
}

/** The error code in a JSON body (ours or JSON-RPC), for the outcome table; closed sets only. */
function errorOf(body: string): string {
  try {
    const json = JSON.parse(body);
    const error = json?.error;
    return typeof error === "string"
      ? error
      : typeof error?.code === "number"
      ? `rpc ${error.code}`
      : "";
  } catch {
    return "";
  }
}

function withDeadline<T>(work: Promise<T>, ms = CASE_LIMIT_MS): Promise<T | "hung"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

async function oneRequest(
  fuzz: FuzzTarget,
  request: Request,
  r: Random,
  report: FuzzReport,
  label: string,
): Promise<void> {
  const { gw, target } = fuzz;
  // A few addresses, so public servers' sessions (per address) are met again.
  const address = `10.0.0.${r.int(3)}`;
  const answered = await withDeadline(
    gw.gateway.fetch(request, { remoteAddr: { hostname: address } }).then(
      async (response) => {
        const type = response.headers.get("content-type") ?? "";
        // Streams stay open: take the head, then hang up (a client going away mid-stream).
        const body = type.includes("text/event-stream")
          ? (await response.body?.cancel(), "")
          : await response.text();
        return { response, body };
      },
      (error: Error) => error,
    ),
  );
  if (answered === "hung") {
    report.failures.push(`${label}: no answer within ${CASE_LIMIT_MS} ms`);
    return;
  }
  if (answered instanceof Error) {
    report.failures.push(`${label}: the gateway threw ${answered.name}: ${answered.message}`);
    return;
  }
  const { response, body } = answered;
  const outcome = `${response.status} ${errorOf(body)}`.trim();
  report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1;
  if (response.status >= 500 && response.status !== 502) {
    const cause = gw.logs.findLast((line) => line.includes('"msg":"unhandled error"')) ?? "";
    report.failures.push(
      `${label}: ${request.method} ${new URL(request.url).pathname} → ${response.status} ${
        body.slice(0, 200)
      } ${cause.slice(0, 600)}`,
    );
  }
  const session = response.headers.get("mcp-session-id");
  if (session && !target.sessions.some((known) => known.id === session)) {
    target.sessions.push({ server: new URL(request.url).pathname.split("/")[1], id: session });
    if (target.sessions.length > 40) target.sessions.shift();
  }
  if (response.status === 201 && new URL(request.url).pathname === "/register") {
    target.clients.push(JSON.parse(body).client_id);
    if (target.clients.length > 20) target.clients.shift();
  }
}

/** Runs `count` cases from `seed`: 60% MCP, 30% OAuth and pages, 10% configuration files. */
export async function runFuzz(fuzz: FuzzTarget, seed: number, count: number): Promise<FuzzReport> {
  const report: FuzzReport = { seed, cases: count, outcomes: {}, failures: [] };
  const env = (name: string) => name === "IDP_SECRET" ? "secret" : undefined;
  for (let i = 0; i < count; i++) {
    const caseSeed = (seed * 1_000_003 + i) >>> 0;
    const r = new Random(caseSeed);
    const label = `case ${i} (seed ${caseSeed})`;
    const kind = r.next();
    if (kind < 0.1) {
      try {
        parseConfigText(configText(r, fuzz.configSamples), env, "fuzz.yaml");
        report.outcomes["config accepted"] = (report.outcomes["config accepted"] ?? 0) + 1;
      } catch (error) {
        if (error instanceof ConfigError) {
          report.outcomes["config refused"] = (report.outcomes["config refused"] ?? 0) + 1;
        } else report.failures.push(`${label}: the config loader threw ${(error as Error).stack}`);
      }
      continue;
    }
    let request: Request;
    try {
      request = kind < 0.7 ? mcpRequest(r, fuzz.target) : oauthRequest(r, fuzz.target);
    } catch {
      // The platform would not even build this request (no client could send it).
      report.outcomes["unsendable"] = (report.outcomes["unsendable"] ?? 0) + 1;
      continue;
    }
    await oneRequest(fuzz, request, r, report, label);
  }
  return report;
}

/** Garbage straight onto TCP: request lines, headers and bodies no HTTP client would send. */
export async function rawGarbage(port: number, seed: number, count: number): Promise<void> {
  const r = new Random(seed);
  for (let i = 0; i < count; i++) {
    const connection = await Deno.connect({ hostname: "127.0.0.1", port });
    const lines = [
      r.pick([
        "GET / HTTP/1.1",
        "POST /open/mcp HTTP/1.1",
        "BREW /pot HTCPCP/1.0",
        r.text(30),
        "GET /" + "a".repeat(20_000) + " HTTP/1.1",
      ]),
      r.pick(["Host: 127.0.0.1", "", r.text(30)]),
      r.pick([
        "Content-Length: 5",
        "Content-Length: -1",
        "Content-Length: 99999999999",
        "Transfer-Encoding: chunked",
        r.text(20),
      ]),
      r.chance(0.3) ? `X-Big: ${"b".repeat(70_000)}` : "",
    ];
    const payload = new TextEncoder().encode(`${lines.join("\r\n")}\r\n\r\n${r.text(50)}`);
    try {
      await connection.write(payload);
      const buffer = new Uint8Array(4096);
      // Whatever the server says (a 400, or nothing while it waits for more), then hang up.
      await withDeadline(connection.read(buffer).catch(() => null), 200);
    } catch {
      // The server may hang up first; that is an answer too.
    } finally {
      try {
        connection.close();
      } catch { /* already closed */ }
    }
  }
}
