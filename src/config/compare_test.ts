import assert from "node:assert/strict";
import { Secret } from "../core/secret.ts";
import { sameConfig } from "./compare.ts";

Deno.test("sameConfig() compares secrets by value, maps, lists and nested objects", () => {
  const server = (token: string, args = ["a"]) => ({
    name: "x",
    args,
    env: {},
    serviceAuths: [{ type: "bearer", tokens: [new Secret(token)] }],
    cwd: undefined,
  });
  assert.equal(sameConfig(server("one"), server("one")), true);
  assert.equal(sameConfig(server("one"), server("two")), false, "a changed secret is a change");
  assert.equal(sameConfig(server("one"), server("one", ["b"])), false);
  assert.equal(sameConfig({ a: 1, b: undefined }, { a: 1 }), true);
  assert.equal(sameConfig(new Map([["k", { v: 1 }]]), new Map([["k", { v: 1 }]])), true);
  assert.equal(sameConfig(new Map([["k", { v: 1 }]]), new Map([["k", { v: 2 }]])), false);
});
