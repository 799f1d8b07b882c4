import assert from "node:assert/strict";
import { boundedArguments, KEPT_ARGUMENT_CHARS } from "./app_console_readings.ts";

Deno.test("boundedArguments() keeps small arguments as they are and the start of large ones", () => {
  assert.deepEqual(boundedArguments({ q: "docs" }), { q: "docs" });
  const kept = boundedArguments({ q: "A".repeat(100_000) }) as string;
  assert.equal(typeof kept, "string");
  assert.ok(kept.length < KEPT_ARGUMENT_CHARS + 40, `${kept.length}`);
  assert.match(kept, /^\{"q":"AAA[^]*… \(100,008 characters\)$/);
});
