/**
 * The watchdog every test runs under (tests/watchdog.ts, preloaded by `deno task test`): a test
 * that waits for ever is failed at its limit with its name, its step and what it waited for,
 * and the tests after it still run, so a hang can never hold the suite until CI's limit.
 */
import assert from "node:assert/strict";
import { within } from "./fixtures/waits.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("watchdog: a hung test fails at its limit, named with its step and its wait; the rest run", async () => {
  const progress = await Deno.makeTempFile({ prefix: "gatehouse-progress-" });
  try {
    const child = new Deno.Command("deno", {
      args: [
        "test",
        "--allow-all",
        "--no-check",
        "--preload",
        `${ROOT}tests/watchdog.ts`,
        `${ROOT}tests/fixtures/hanging_tests.ts`,
      ],
      env: { GATEHOUSE_TEST_LIMIT: "2", GATEHOUSE_TEST_PROGRESS: progress, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const finished = await within(
      "the hanging tests to be ended by their watchdog",
      child.output(),
      120_000,
    );
    const output = new TextDecoder().decode(finished.stdout) +
      new TextDecoder().decode(finished.stderr);
    assert.equal(finished.code, 1, output);
    assert.match(output, /1 passed .*\| 2 failed/, output);
    assert.match(
      output,
      /test "waits in a step on a named promise that never settles" \(tests\/fixtures\/hanging_tests\.ts:\d+:\d+\) overran its 2 s limit, in step "the stuck step", waiting for "a reply that never comes"/,
    );
    assert.match(
      output,
      /test "waits on a bare await" \(tests\/fixtures\/hanging_tests\.ts:\d+:\d+\) overran its 2 s limit, waiting on an await no helper named/,
    );
    const lines = (await Deno.readTextFile(progress)).trim().split("\n");
    assert.deepEqual(
      lines.map((line) => line.replace(/^\S+ /, "").replace(/:\d+:\d+ /, " ")),
      [
        "start tests/fixtures/hanging_tests.ts :: waits in a step on a named promise that never settles",
        "end tests/fixtures/hanging_tests.ts :: waits in a step on a named promise that never settles :: overran",
        "start tests/fixtures/hanging_tests.ts :: waits on a bare await",
        "end tests/fixtures/hanging_tests.ts :: waits on a bare await :: overran",
        "start tests/fixtures/hanging_tests.ts :: a test after the stuck ones still runs",
        "end tests/fixtures/hanging_tests.ts :: a test after the stuck ones still runs :: ok",
      ],
    );
  } finally {
    await Deno.remove(progress);
  }
});
