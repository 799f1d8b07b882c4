/**
 * The fault matrix for HTTP backends (Streamable HTTP and legacy SSE), reached through both
 * fronts (/mcp and /sse) with the official SDK client: answers that are slow, not JSON, cut in
 * half, reset mid-stream or never come, and a backend process that dies mid-call. Each fails
 * its own request or session with a clear error within limits.requestTimeout, a session that
 * can go on does, other sessions are untouched, and nothing stays open afterwards.
 */
import assert from "node:assert/strict";
import { connectClient, type Front } from "./fixtures/client.ts";
import { startGateway } from "./fixtures/gateway.ts";
import { refusedPort } from "./fixtures/ports.ts";
import { INIT, post } from "./fixtures/raw.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import type { Client } from "./fixtures/sdk.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const TIMEOUT = /the backend did not answer tools\/call within 10s \(limits\.requestTimeout\)/;

/** The misbehaving backend as a process of its own, so that `crash` really ends it. */
async function startBadBackend() {
  const child = new Deno.Command("deno", {
    args: ["run", "--allow-net", `${ROOT}tests/fixtures/bad_http_backend.ts`],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const port = Number(
    (await within("bad_http_backend to print its port", reader.read())).value!.trim(),
  );
  reader.releaseLock();
  void child.stdout.cancel().catch(() => {});
  return {
    url: `http://127.0.0.1:${port}`,
    status: child.status,
    stop: async () => {
      try {
        child.kill("SIGKILL");
      } catch { /* it crashed on purpose */ }
      await within("bad_http_backend to exit after SIGKILL", child.status);
    },
  };
}

/**
 * One call and its outcome. The client's own timeout (30 s) is far past the gateway's (10 s), so
 * a timeout message names who gave up; whether a failure came "at once" is read from what it
 * says (a broken connection, not JSON), never from a stopwatch that a loaded machine stretches.
 */
async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, {
      timeout: 30_000,
    });
    const text = (result.content as { text: string }[])[0].text;
    return { ok: true, text };
  } catch (error) {
    return { ok: false, text: (error as Error).message };
  }
}

async function end(client: Client): Promise<void> {
  const transport = client.transport as { terminateSession?: () => Promise<void> } | undefined;
  await transport?.terminateSession?.().catch(() => {});
  await client.close().catch(() => {});
}

const MATRIX: { backend: "http" | "sse"; front: Front }[] = [
  { backend: "http", front: "streamable" },
  { backend: "http", front: "sse" },
  { backend: "sse", front: "streamable" },
  { backend: "sse", front: "sse" },
];

Deno.test("HTTP backend faults through both fronts: each fails its own request or session, clearly and in time", async (t) => {
  const backend = await startBadBackend();
  const doomed = await startBadBackend();
  // A port nothing listens on, nor can come to: connections to it are refused.
  const closedPort = await refusedPort();
  const gw = await startGateway(`
limits: { requestTimeout: 10s, sessionsPerUser: 100 }
servers:
  http: { transport: streamable-http, url: "${backend.url}/mcp", public: true }
  sse: { transport: sse, url: "${backend.url}/sse", public: true }
  http-dies: { transport: streamable-http, url: "${doomed.url}/mcp", public: true }
  sse-dies: { transport: sse, url: "${doomed.url}/sse", public: true }
  sse-refused: { transport: sse, url: "http://127.0.0.1:${closedPort}/sse", public: true }
`);
  const bystander = await connectClient(gw.url, "http", "streamable");
  try {
    await t.step("answers that come late, within the limit, arrive", async () => {
      await Promise.all(MATRIX.map(async ({ backend, front }) => {
        const client = await connectClient(gw.url, backend, front);
        const slow = await call(client, "slow", { ms: 500 });
        assert.deepEqual([slow.ok, slow.text], [true, "answered slow"], `${backend} ${front}`);
        await end(client);
      }));
    });

    await t.step(
      "hang, half an event, garbage: the request fails, the session goes on",
      async () => {
        await Promise.all(
          MATRIX.flatMap(({ backend, front }) =>
            ["hang", "half", "garbage"].map(async (fault) => {
              const where = `${fault} from the ${backend} backend via ${front}`;
              const client = await connectClient(gw.url, backend, front);
              const failed = await call(client, fault);
              assert.equal(failed.ok, false, where);
              if (fault === "garbage" && backend === "http") {
                // The answer came at once and was not JSON: said so, without waiting.
                assert.match(failed.text, /the backend's answer is not valid JSON/, where);
              } else {
                // Nothing usable came: the gateway's timeout, not the client's.
                assert.match(failed.text, TIMEOUT, where);
              }
              const after = await call(client, "ok");
              if (fault === "half" && backend === "sse") {
                // Half an event corrupts the one stream a legacy backend has: the next event is
                // read as the rest of it. The session can only time out (or be ended).
                assert.match(after.text, TIMEOUT, where);
              } else {
                assert.deepEqual([after.ok, after.text], [true, "answered ok"], where);
              }
              await end(client);
            })
          ),
        );
      },
    );

    await t.step("an answer reset mid-stream", async () => {
      await Promise.all(MATRIX.map(async ({ backend, front }) => {
        const where = `reset from the ${backend} backend via ${front}`;
        const client = await connectClient(gw.url, backend, front);
        const failed = await call(client, "reset");
        assert.equal(failed.ok, false, where);
        if (backend === "http") {
          // One POST's stream broke before its response: that request fails at once, saying
          // why; the backend session is fine and so is ours.
          assert.match(failed.text, /could not reach the backend: .*connection/, where);
          const after = await call(client, "ok");
          assert.deepEqual([after.ok, after.text], [true, "answered ok"], where);
        } else {
          // A legacy backend's session is its stream: ours ends at once, saying why.
          assert.match(failed.text, /the backend's event stream broke/, where);
          const after = await call(client, "ok");
          assert.equal(after.ok, false, where);
        }
        await end(client);
      }));
    });

    await t.step("the backend process dies mid-call", async () => {
      const viaHttp = await connectClient(gw.url, "http-dies", "streamable");
      const viaSse = await connectClient(gw.url, "sse-dies", "sse");
      const [httpCall, sseCall] = await Promise.all([
        // Never answered: whenever the crash lands, this call is still waiting for it.
        call(viaHttp, "hang"),
        call(viaSse, "crash"),
      ]);
      // The legacy backend's stream ends with the process: its session ends at once.
      assert.equal(sseCall.ok, false);
      assert.match(sseCall.text, /the backend's event stream broke/);
      // The Streamable HTTP call in flight loses its connection: said so at once.
      assert.equal(httpCall.ok, false);
      assert.match(httpCall.text, /could not reach the backend/);
      assert.equal((await within("the doomed backend to exit", doomed.status)).code, 3);
      await end(viaHttp);
      await end(viaSse);
    });

    await t.step("a legacy SSE backend that refuses connections", async () => {
      const init = await post(`${gw.url}/sse-refused/mcp`, INIT);
      assert.equal(init.status, 502, init.text);
      assert.match(init.text, /The backend \\"sse-refused\\" could not start/);
    });

    await t.step("the bystander was never touched, and only its session is left", async () => {
      const result = await call(bystander, "ok");
      assert.deepEqual([result.ok, result.text], [true, "answered ok"]);
      await waitUntil(
        "every session but the bystander's to end",
        () => gw.gateway.sessions.size === 1,
      );
    });
  } finally {
    await end(bystander);
    await gw.close();
    await backend.stop();
    await doomed.stop();
  }
});

Deno.test("HTTP backend answers past limits.maxMessageBytes fail their call with the limit's name, and memory stays bounded", async (t) => {
  const backend = await startBadBackend();
  const gw = await startGateway(`
limits: { requestTimeout: 10s, maxMessageBytes: 1MiB }
servers:
  http: { transport: streamable-http, url: "${backend.url}/mcp", public: true }
  sse: { transport: sse, url: "${backend.url}/sse", public: true }
`);
  const TOO_LARGE = /the backend's answer is larger than limits\.maxMessageBytes \(1 MiB\)/;
  // What the backend got to send of a 64 MiB answer before the gateway stopped reading it:
  // the limit, plus what the sockets between them hold.
  const sent = async () =>
    ((await (await fetch(`${backend.url}/stats`)).json()) as { sent: number }).sent;
  try {
    await t.step(
      "Streamable HTTP: a huge JSON body, SSE event or gzip bomb fails its call; the session goes on",
      async () => {
        const client = await connectClient(gw.url, "http", "streamable");
        try {
          for (const tool of ["huge-json", "huge-event", "gzip-bomb"]) {
            const failed = await call(client, tool);
            assert.equal(failed.ok, false, tool);
            assert.match(failed.text, TOO_LARGE, tool);
            if (tool === "gzip-bomb") assert.match(failed.text, /once decompressed/);
            else {assert.ok(
                (await sent()) < 32 * 1024 * 1024,
                `${tool}: read no further than needed`,
              );}
            const after = await call(client, "ok");
            assert.deepEqual([after.ok, after.text], [true, "answered ok"], `after ${tool}`);
          }
        } finally {
          await end(client);
        }
      },
    );

    await t.step(
      "legacy SSE: a huge event fails its call; the stream and the session go on",
      async () => {
        const client = await connectClient(gw.url, "sse", "streamable");
        try {
          const before = await call(client, "ok");
          assert.deepEqual([before.ok, before.text], [true, "answered ok"]);
          // Two at once: the huge answer's call gets the limit's error (at the event's first
          // MiB), the other its answer, written after the 8 MiB the gateway reads through.
          const [failed, beside] = await Promise.all([
            call(client, "huge-event", { bytes: 8 * 1024 * 1024 }),
            call(client, "ok"),
          ]);
          assert.equal(failed.ok, false);
          assert.match(failed.text, TOO_LARGE);
          assert.deepEqual([beside.ok, beside.text], [true, "answered ok"]);
          const after = await call(client, "ok");
          assert.deepEqual([after.ok, after.text], [true, "answered ok"], "the session goes on");
          assert.ok(
            gw.logs.some((line) => line.includes("backend answer too large")),
            "the drop is logged",
          );
        } finally {
          await end(client);
        }
      },
    );
  } finally {
    await gw.close();
    await backend.stop();
  }
});
