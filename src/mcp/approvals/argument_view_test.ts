import assert from "node:assert/strict";
import { argumentsDigest, canonicalArguments, foldedArguments } from "./argument_view.ts";

Deno.test("argumentsDigest() of canonicalArguments() ignores key order, not values", () => {
  const a = argumentsDigest(canonicalArguments({ path: "/x", opts: { a: 1, b: 2 } }));
  const b = argumentsDigest(canonicalArguments({ opts: { b: 2, a: 1 }, path: "/x" }));
  const c = argumentsDigest(canonicalArguments({ opts: { b: 2, a: 1 }, path: "/y" }));
  assert.equal(a, b);
  assert.notEqual(a, c);
  assert.equal(canonicalArguments(undefined), "{}");
});

Deno.test("foldedArguments() cuts long strings and lists, saying how much it left out", () => {
  const folded = foldedArguments(
    { text: "x".repeat(2_500), items: Array.from({ length: 60 }, (_, i) => i), short: "ok" },
    10_000,
  ) as { text: string; items: unknown[]; short: string };
  assert.equal(folded.short, "ok");
  assert.ok(folded.text.endsWith("… (500 more characters)"));
  assert.equal(folded.items.length, 51);
  assert.equal(folded.items.at(-1), "… (10 more items)");
});

Deno.test("foldedArguments() stays small whatever it is given", () => {
  const wide = Object.fromEntries(
    Array.from({ length: 50 }, (_, i) => [`k${i}`, "y".repeat(1_900)]),
  );
  const folded = foldedArguments(wide, 95_000);
  assert.equal(typeof folded, "string");
  assert.match(folded as string, /95000 characters of arguments, too large to show/);
  let deep: unknown = "bottom";
  for (let i = 0; i < 20; i++) deep = { deeper: deep };
  assert.ok(JSON.stringify(foldedArguments(deep, 500)).includes("nested deeper than shown"));
});

Deno.test("foldedArguments() shows every key, even two long ones cut to the same text", () => {
  // Approved is the digest of both; the approver must read both, not the last one alone.
  const stem = "k".repeat(200);
  const folded = foldedArguments({ [`${stem}1`]: "harmless", [`${stem}2`]: "rm -rf /" }, 1_000);
  const values = Object.values(folded as Record<string, unknown>);
  assert.deepEqual(values.sort(), ["harmless", "rm -rf /"]);
});
