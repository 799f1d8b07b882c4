/**
 * The route table's promises to a client, in-process (the gateway's `fetch`, no socket): both
 * lanes finish a request the same way, and the fallbacks (404, 405, 500) answer in JSON.
 */
import assert from "node:assert/strict";
import { createGateway, type Gateway } from "../app.ts";
import { parseConfigText } from "../config/load.ts";
import { createLogger } from "../observability/logger.ts";
import { GatewayMetrics } from "../observability/metrics.ts";
import { openKvStore } from "../store/kv.ts";
import { testClock } from "../../tests/fixtures/clock.ts";
import type { ServerAuthenticator } from "./bearer.ts";
import { buildRoutes } from "./routes.ts";
import type { ServerName } from "../core/ids.ts";

const TOKEN = "routes-test-token-0123456789";
const CONFIG = `
servers:
  fx:
    transport: streamable-http
    url: http://127.0.0.1:9/mcp
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`;
const ORIGIN = "http://127.0.0.1:8080";
const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
};
const GENERATED_ID = /^[0-9a-f]{8}-[0-9a-z]+$/;

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function withGateway(test: (gw: Gateway, logs: string[]) => Promise<void>): Promise<void> {
  const logs: string[] = [];
  const store = await openKvStore(":memory:");
  const clock = testClock();
  clock.freeze();
  const gateway = await createGateway(parseConfigText(CONFIG, () => undefined), {
    store,
    logger: createLogger("debug", (line) => logs.push(line)),
    clock,
  });
  try {
    await test(gateway, logs);
  } finally {
    await gateway.close();
    store.close();
  }
}

async function call(
  fetch: (request: Request) => Promise<Response>,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(
    new Request(`${ORIGIN}${path}`, {
      method,
      headers: { "content-type": "application/json", accept: "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : "" };
}

/** The access line of the request with this id. */
function accessLine(logs: string[], requestId: string): Record<string, unknown> {
  const line = logs.map((l) => JSON.parse(l)).find((l) =>
    l.msg === "request" && l.requestId === requestId
  );
  assert.ok(line, `an access line for ${requestId} in:\n${logs.join("\n")}`);
  return line;
}

function assertFinished(answer: Answer, requestId: string | RegExp): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    assert.equal(answer.headers.get(name), value, name);
  }
  const id = answer.headers.get("x-request-id") ?? "";
  if (typeof requestId === "string") assert.equal(id, requestId);
  else assert.match(id, requestId);
}

const listTools = { jsonrpc: "2.0", id: 1, method: "tools/list" };

Deno.test("buildRoutes() finishes a fast-lane request as it finishes a Hono one", async () => {
  await withGateway(async (gw, logs) => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    // POST /fx/mcp takes the fast lane, POST /fx/sse the same handler through Hono.
    const fast = await call(
      gw.fetch,
      "POST",
      "/fx/mcp",
      { ...auth, "x-request-id": "fast-1" },
      listTools,
    );
    const hono = await call(
      gw.fetch,
      "POST",
      "/fx/sse",
      { ...auth, "x-request-id": "hono-1" },
      listTools,
    );
    assert.equal(fast.status, 400);
    assert.deepEqual(hono.body, fast.body);
    assertFinished(fast, "fast-1");
    assertFinished(hono, "hono-1");
    const names = (a: Answer) => [...a.headers.keys()].sort();
    assert.deepEqual(names(hono), names(fast));

    for (const [id, path] of [["fast-1", "/fx/mcp"], ["hono-1", "/fx/sse"]]) {
      const line = accessLine(logs, id);
      assert.deepEqual(Object.keys(line).sort(), [
        "level",
        "method",
        "ms",
        "msg",
        "path",
        "requestId",
        "status",
        "time",
      ]);
      assert.deepEqual({ ...line, time: 0, ms: 0 }, {
        time: 0,
        level: "info",
        msg: "request",
        requestId: id,
        method: "POST",
        path,
        status: 400,
        ms: 0,
      });
    }
    const metrics = gw.metrics();
    for (const kind of ["mcp", "sse"]) {
      assert.match(
        metrics,
        new RegExp(`gatehouse_http_requests_total\\{kind="${kind}",status="400"\\} 1\\n`),
      );
      assert.match(
        metrics,
        new RegExp(`gatehouse_http_request_duration_seconds_count\\{kind="${kind}"\\} 1\\n`),
      );
    }
  });
});

Deno.test("buildRoutes() gives a request without a sane x-request-id a new one, on both lanes", async () => {
  await withGateway(async (gw, logs) => {
    const ids = new Set<string>();
    for (const path of ["/fx/mcp", "/fx/sse", "/health"]) {
      const givens: Record<string, string>[] = [{}, {
        "x-request-id": "not sane: spaces and a \u00e9",
      }];
      for (const given of givens) {
        const answer = await call(gw.fetch, "POST", path, given, listTools);
        assertFinished(answer, GENERATED_ID);
        const id = answer.headers.get("x-request-id")!;
        assert.equal(accessLine(logs, id).path, path);
        ids.add(id);
      }
    }
    assert.equal(ids.size, 6, "every request got its own id");
  });
});

Deno.test("buildRoutes() answers an unknown path with the 404 JSON", async () => {
  await withGateway(async (gw) => {
    for (const [method, path] of [["GET", "/nope"], ["POST", "/fx/extra/mcp"], ["POST", "//mcp"]]) {
      const answer = await call(gw.fetch, method, path, { "x-request-id": "lost-1" });
      assert.equal(answer.status, 404, `${method} ${path}`);
      assert.deepEqual(answer.body, { error: "not_found", error_description: "no such endpoint" });
      assertFinished(answer, "lost-1");
    }
  });
});

Deno.test("buildRoutes() answers a method an MCP path does not take with 405 and Allow", async () => {
  await withGateway(async (gw) => {
    for (
      const [method, path, allow] of [
        ["PUT", "/fx/mcp", "GET, POST, DELETE, OPTIONS"],
        ["PATCH", "/fx/sse", "GET, POST, DELETE, OPTIONS"],
        ["GET", "/fx/message", "POST, OPTIONS"],
      ]
    ) {
      const answer = await call(gw.fetch, method, path, { "x-request-id": "wrong-1" });
      assert.equal(answer.status, 405, `${method} ${path}`);
      assert.equal(answer.headers.get("allow"), allow);
      assert.deepEqual(answer.body, {
        error: "method_not_allowed",
        error_description: `${method} is not supported here`,
      });
      assertFinished(answer, "wrong-1");
    }
  });
});

Deno.test("buildRoutes() turns a handler's unexpected error into the 500 JSON, logged with the request id", async () => {
  await withGateway(async (gw) => {
    const logs: string[] = [];
    // An authenticator whose store went away: the one collaborator that can fail on both lanes.
    const failing: ServerAuthenticator = {
      authenticate: () => Promise.reject(new Error("the token store is unreachable")),
    };
    const routes = buildRoutes({
      config: gw.config,
      sessions: gw.sessions,
      links: gw.links,
      authenticators: new Map([["fx" as ServerName, failing]]),
      logger: createLogger("debug", (line) => logs.push(line)),
      clock: testClock(),
      metrics: new GatewayMetrics(),
      policies: new Map(),
    });
    const fetch = (request: Request) => routes.fetch(request, { remoteAddress: "127.0.0.1" });
    for (
      const [method, path, id] of [["POST", "/fx/mcp", "boom-fast"], [
        "GET",
        "/fx/mcp",
        "boom-hono",
      ]]
    ) {
      const answer = await call(
        fetch,
        method,
        path,
        { "x-request-id": id },
        method === "POST" ? listTools : undefined,
      );
      assert.equal(answer.status, 500, `${method} ${path}`);
      assert.deepEqual(answer.body, {
        error: "server_error",
        error_description: "the gateway failed to handle this request",
      });
      assertFinished(answer, id);
      const failure = logs.map((l) => JSON.parse(l)).find((l) =>
        l.msg === "unhandled error" && l.requestId === id
      );
      assert.ok(failure, `the error is logged with request id ${id}:\n${logs.join("\n")}`);
      assert.equal(failure.level, "error");
      assert.match(JSON.stringify(failure.error), /the token store is unreachable/);
      assert.equal(accessLine(logs, id).status, 500);
    }
  });
});
