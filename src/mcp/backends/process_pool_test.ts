import assert from "node:assert/strict";
import type { StdioServerConfig } from "../../config/types.ts";
import { systemClock } from "../../core/clock.ts";
import { createLogger, type Logger } from "../../observability/logger.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { waitUntil, within } from "../../../tests/fixtures/waits.ts";
import { ProcessLimitError, ProcessPool } from "./process_pool.ts";
import type { ProcessPort } from "./process_port.ts";
import { StdioBackend } from "./stdio.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;

const SERVER = {
  name: "fx",
  transport: "stdio",
  command: "deno",
  args: [
    "run",
    "-A",
    "--config",
    `${ROOT}deno.test.json`,
    `${ROOT}tests/fixtures/fixture_server.ts`,
    "stdio",
  ],
  env: {},
  share: "person",
  processes: 1,
  processIdleTimeoutMs: 60_000,
  forwardRoots: true,
} as unknown as StdioServerConfig;

/** Joins `person`'s process (started with `token`, if any) and initializes a session on it. */
async function join(pool: ProcessPool, person: string, token?: string): Promise<ProcessPort> {
  const port = pool.join({
    server: SERVER,
    person,
    startedWith: token,
    startTimeoutMs: 20_000,
    spawn: (logger: Logger) =>
      new StdioBackend({
        spec: { command: SERVER.command, args: SERVER.args, env: {} },
        maxMessageBytes: 1_048_576,
        killGraceMs: 1_000,
        clock: systemClock,
        logger,
      }),
  });
  await within(`${person}'s session joining`, port.start());
  return port;
}

Deno.test("ProcessPool.join() gives a person one process, a new one when their credential changes, and keeps to processesPerUser", async () => {
  const pool = new ProcessPool(
    systemClock,
    { processesPerUser: 2, maxProcesses: 10 },
    createLogger("error"),
  );
  try {
    const first = await join(pool, "ann", "token-1");
    const second = await join(pool, "ann", "token-1");
    assert.equal(first.pid, second.pid);
    // A refreshed credential: new sessions get a process started with it.
    const refreshed = await join(pool, "ann", "token-2");
    assert.notEqual(refreshed.pid, first.pid);
    // The old process stops once its last session has ended.
    await first.close();
    await second.close();
    await waitUntil("the old process to stop", () => pool.size === 1);
    assert.deepEqual(pool.readings(), [{ server: "fx", processes: 1, sessions: 1, busiest: 1 }]);
    // ann may have two; bob's first is his own.
    await join(pool, "ann", "token-3");
    assert.throws(
      () =>
        pool.join({
          server: SERVER,
          person: "ann",
          startedWith: "token-4",
          startTimeoutMs: 1,
          spawn: () => {
            throw new Error("not started");
          },
        }),
      (error) => error instanceof ProcessLimitError && /processesPerUser: 2/.test(error.message),
    );
    const bob = await join(pool, "bob");
    await bob.send({ jsonrpc: "2.0", id: 1, method: "ping" } as JSONRPCMessage);
  } finally {
    await pool.closeAll("the test ended");
  }
});
