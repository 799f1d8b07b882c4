import assert from "node:assert/strict";
import { testClock } from "../../tests/fixtures/clock.ts";
import { checkUpstreamUrl, upstreamFetch, UpstreamRefusal } from "./upstream_fetch.ts";

const HOSTS = new Set(["127.0.0.1", "mcp.tracker.example"]);

function refusedWith(code: string, pattern: RegExp) {
  return (error: unknown) =>
    error instanceof UpstreamRefusal && error.code === code && pattern.test(error.message);
}

Deno.test("checkUpstreamUrl() admits https to an allowed host and plain http to this machine only", () => {
  checkUpstreamUrl(new URL("https://MCP.tracker.example/x"), HOSTS);
  checkUpstreamUrl(new URL("http://127.0.0.1:9/x"), HOSTS);
  assert.throws(
    () => checkUpstreamUrl(new URL("http://mcp.tracker.example/x"), HOSTS),
    refusedWith("insecure", /is not https/),
  );
  assert.throws(
    () => checkUpstreamUrl(new URL("https://10.0.0.7/metadata"), HOSTS),
    refusedWith("host_not_allowed", /10\.0\.0\.7 is neither the server's own host/),
  );
  assert.throws(
    () => checkUpstreamUrl(new URL("https://user:pw@mcp.tracker.example/"), HOSTS),
    refusedWith("insecure", /user name or password/),
  );
  assert.throws(
    () => checkUpstreamUrl(new URL("ftp://mcp.tracker.example/"), HOSTS),
    refusedWith("insecure", /not https/),
  );
});

/** A real server on 127.0.0.1 answering with `handler`. */
async function serve(handler: (request: Request) => Response | Promise<Response>) {
  const ready = Promise.withResolvers<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    handler,
  );
  return { url: `http://127.0.0.1:${await ready.promise}`, close: () => server.shutdown() };
}

Deno.test("upstreamFetch() never follows a redirect, even to an allowed host", async () => {
  const target = await serve((request) =>
    new URL(request.url).pathname === "/moved"
      ? new Response(null, { status: 302, headers: { location: "/elsewhere" } })
      : Response.json({ reached: true })
  );
  try {
    const fetch = upstreamFetch({ hosts: HOSTS, clock: testClock() });
    await assert.rejects(
      fetch(`${target.url}/moved`),
      refusedWith("redirect", /answered with a redirect \(302\), which Gatehouse does not follow/),
    );
    assert.deepEqual(await (await fetch(`${target.url}/here`)).json(), { reached: true });
  } finally {
    await target.close();
  }
});

Deno.test("upstreamFetch() refuses an answer over its size limit, and one that takes too long", async () => {
  const gate = Promise.withResolvers<void>();
  const target = await serve(async (request) => {
    if (new URL(request.url).pathname === "/big") return new Response("x".repeat(2048));
    await gate.promise;
    return new Response("late");
  });
  const clock = testClock();
  try {
    const fetch = upstreamFetch({ hosts: HOSTS, clock, maxBytes: 1024, timeoutMs: 5_000 });
    await assert.rejects(
      fetch(`${target.url}/big`),
      refusedWith("too_large", /more than 1024 bytes/),
    );
    const slow = fetch(`${target.url}/slow`);
    clock.advance(5_001);
    await assert.rejects(slow, (error) => (error as Error).name === "TimeoutError");
  } finally {
    gate.resolve();
    await target.close();
  }
});
