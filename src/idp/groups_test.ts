import assert from "node:assert/strict";
import { boundGroups, MAX_GROUP_BYTES, MAX_GROUPS, readGroupsClaim } from "./groups.ts";

function recordingLog() {
  const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
  return {
    warnings,
    warn: (message: string, fields?: Record<string, unknown>) => warnings.push({ message, fields }),
  };
}

Deno.test("readGroupsClaim() returns undefined for an absent claim, so the caller may look elsewhere", () => {
  const log = recordingLog();
  assert.equal(readGroupsClaim(undefined, "groups", "oidc:a", log), undefined);
  assert.equal(readGroupsClaim(null, "groups", "oidc:a", log), undefined);
  assert.deepEqual(log.warnings, []);
});

Deno.test("readGroupsClaim() refuses a number with a warning that names the claim, not its value", () => {
  const log = recordingLog();
  assert.deepEqual(readGroupsClaim(42, "groups", "oidc:a", log), []);
  assert.deepEqual(log.warnings[0].fields, { claim: "groups", subject: "oidc:a", type: "number" });
});

Deno.test("boundGroups() keeps distinct non-empty names, at most MAX_GROUPS, and warns once past it", () => {
  const log = recordingLog();
  const many = Array.from({ length: 500 }, (_, i) => `group-${i}`);
  const kept = boundGroups(["", "group-0", ...many], "azure:a", log);
  assert.equal(kept.length, MAX_GROUPS);
  assert.deepEqual(kept.slice(0, 2), ["group-0", "group-1"]);
  assert.equal(log.warnings.length, 1);
  assert.equal(
    log.warnings[0].message,
    "the person belongs to more groups than the gateway keeps; the rest are ignored",
  );
  assert.equal(log.warnings[0].fields?.dropped, 300);
});

Deno.test("boundGroups() keeps at most MAX_GROUP_BYTES of names", () => {
  const log = recordingLog();
  const long = Array.from({ length: 40 }, (_, i) => `${i}`.padStart(1000, "é"));
  const kept = boundGroups(long, "oidc:a", log);
  const bytes = kept.reduce((sum, g) => sum + new TextEncoder().encode(g).length, 0);
  assert.ok(bytes <= MAX_GROUP_BYTES, `${bytes} bytes kept`);
  assert.ok(kept.length < 40 && kept.length > 0);
  assert.equal(log.warnings[0].fields?.dropped, 40 - kept.length);
});
