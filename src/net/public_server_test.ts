import assert from "node:assert/strict";
import { createLogger } from "../observability/logger.ts";
import { servePublic } from "./public_server.ts";
import { waitUntil } from "../../tests/fixtures/waits.ts";

const LIMITS = {
  maxConnections: 50,
  headerTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  idleTimeoutMs: 75_000,
  sendTimeoutMs: 60_000,
};

Deno.test("servePublic() starts the server behind again when it stops on an accept error, such as running out of descriptors", async () => {
  const started: Deno.HttpServer<Deno.UnixAddr>[] = [];
  const fail = Promise.withResolvers<void>();
  const logs: string[] = [];
  // The real Deno.serve; the first one's `finished` rejects as it does when an accept fails
  // with EMFILE (which cannot be made to happen on cue here), and that server is shut down.
  const serve = ((options: Deno.ServeUnixOptions, handler: Deno.ServeHandler<Deno.UnixAddr>) => {
    const server = Deno.serve(options, handler);
    started.push(server);
    if (started.length > 1) return server;
    const finished = fail.promise.then(async () => {
      await server.shutdown();
      throw new Error("Too many open files (os error 24)");
    });
    return Object.assign(Object.create(server), { finished, shutdown: () => server.shutdown() });
  }) as unknown as typeof Deno.serve;
  const publicServer = await servePublic(
    {
      hostname: "127.0.0.1",
      port: 0,
      limits: LIMITS,
      serve,
      logger: createLogger("info", (line) => logs.push(line)),
    },
    (_request, peer) => new Response(`served ${peer}`),
  );
  const url = `http://127.0.0.1:${publicServer.addr.port}/`;
  try {
    assert.equal(await (await fetch(url)).text(), "served 127.0.0.1");
    fail.resolve();
    await waitUntil("the server to be started again", () => started.length === 2);
    await waitUntil("the gateway to answer again", async () => {
      const response = await fetch(url).catch(() => undefined);
      return (await response?.text()) === "served 127.0.0.1";
    });
    assert.ok(logs.some((line) => line.includes("the HTTP server stopped; starting it again")));
    assert.ok(logs.some((line) => line.includes("the HTTP server is serving again")));
  } finally {
    await publicServer.close();
  }
});
