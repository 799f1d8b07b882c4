import assert from "node:assert/strict";
import { canonicalJson } from "./json_shape.ts";

Deno.test("canonicalJson() sorts keys at every depth and writes what JSON would", () => {
  const value = { b: [3, { z: 1, a: [null, "x"] }], a: { d: undefined, c: 'é"\n' }, e: [] };
  assert.equal(canonicalJson(value), '{"a":{"c":"é\\"\\n"},"b":[3,{"a":[null,"x"],"z":1}],"e":[]}');
  assert.equal(canonicalJson([undefined, {}, true, 1.5]), "[null,{},true,1.5]");
  assert.equal(canonicalJson("[{"), '"[{"');
  assert.equal(canonicalJson(undefined), "null");
  // The same value in another key order gives the same text.
  assert.equal(
    canonicalJson({ y: { q: 1, p: 2 }, x: 0 }),
    canonicalJson({ x: 0, y: { p: 2, q: 1 } }),
  );
});

Deno.test("canonicalJson() writes a value nested 100,000 levels deep (it used to overflow the stack)", () => {
  let deep: unknown = 1;
  for (let level = 0; level < 50_000; level++) deep = [{ k: deep }];
  const text = canonicalJson(deep);
  assert.equal(text.length, 50_000 * '[{"k":}]'.length + 1);
  assert.equal(text, JSON.stringify(deep));
});
