import assert from "node:assert/strict";
import { headerSafe } from "./header_safe.ts";

Deno.test("headerSafe() leaves plain names alone and encodes what a header or a list cannot carry", () => {
  const cases: [string, string][] = [
    ["eng", "eng"],
    ["team/platform", "team/platform"],
    ["a,b", "a%2Cb"],
    ["50%", "50%25"],
    ["R&D team", "R&D%20team"],
    ["Équipe", "%C3%89quipe"],
    ["x\r\ny", "x%0D%0Ay"],
    ["\ud800", "%EF%BF%BD"],
  ];
  for (const [name, safe] of cases) {
    assert.equal(headerSafe(name), safe, name);
    assert.equal(headerSafe(name), headerSafe(name), "the same twice (no state kept)");
    if (name !== "\ud800") assert.equal(decodeURIComponent(safe), name);
  }
  // Every value is one a Headers object takes as it is.
  const headers = new Headers();
  for (const [name] of cases) headers.set("x-groups", headerSafe(name));
});
