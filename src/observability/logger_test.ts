import assert from "node:assert/strict";
import { createLogger } from "./logger.ts";
import { testClock } from "../../tests/fixtures/clock.ts";

Deno.test("createLogger() stamps each line with its clock's time, children included", () => {
  const clock = testClock();
  clock.freeze();
  const lines: string[] = [];
  const logger = createLogger("info", (line) => lines.push(line), { clock });
  logger.info("first");
  clock.advance(86_400_000);
  logger.child({ request: "r1" }).warn("a day later");
  const [first, later] = lines.map((line) => JSON.parse(line));
  assert.equal(first.time, new Date(clock.now() - 86_400_000).toISOString());
  assert.deepEqual(later, {
    time: new Date(clock.now()).toISOString(),
    level: "warn",
    msg: "a day later",
    request: "r1",
  });
});
