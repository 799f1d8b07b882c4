import assert from "node:assert/strict";
import { mergeNamed, mergeResources, page, templateOwner, unionCapabilities } from "./catalog.ts";
import { MAX_NAME_LENGTH, qualifiedName } from "./names.ts";

Deno.test("qualifiedName() joins member and name, and shortens long ones deterministically", () => {
  assert.equal(qualifiedName("linear", "create_issue", "."), "linear.create_issue");
  const long = "x".repeat(200);
  const a = qualifiedName("linear", long, ".");
  assert.equal(a.length, MAX_NAME_LENGTH);
  assert.equal(a, qualifiedName("linear", long, "."), "the same input gives the same name");
  assert.ok(a.startsWith("linear.xxx"));
  assert.notEqual(a, qualifiedName("linear", long + "y", "."), "different inputs stay apart");
  assert.match(a, /^[A-Za-z0-9_.-]+$/);
});

Deno.test("mergeNamed() keeps every field but the name and routes back to the original", () => {
  const tool = { name: "t", inputSchema: { type: "object" }, _meta: { k: 1 }, icons: [] };
  const merged = mergeNamed([["a", [tool]], ["b", [tool]]], ".");
  assert.deepEqual(merged.items.map((i) => i.name), ["a.t", "b.t"]);
  assert.deepEqual({ ...merged.items[1], name: "t" }, tool);
  assert.deepEqual(merged.routes.get("b.t"), { member: "b", name: "t" });
});

Deno.test("mergeResources() gives a clashing URI to the earlier member and reports it", () => {
  const merged = mergeResources([["a", [{ uri: "x://1" }]], ["b", [{ uri: "x://1" }, {
    uri: "x://2",
  }]]], "uri");
  assert.equal(merged.items.length, 2);
  assert.equal(merged.routes.get("x://1")?.member, "a");
  assert.deepEqual(merged.clashes, ["x://1"]);
  const templates = mergeResources([["a", [{ uriTemplate: "x://{id}" }]], ["b", [{
    uriTemplate: "x://b/{id}",
  }]]], "uriTemplate");
  assert.equal(templateOwner("x://b/7", templates.routes), "b", "the longest matching prefix wins");
  assert.equal(templateOwner("x://7", templates.routes), "a");
  assert.equal(templateOwner("y://7", templates.routes), undefined);
});

Deno.test("unionCapabilities() offers what some member offers and nothing else", () => {
  assert.deepEqual(
    unionCapabilities([{ tools: { listChanged: true } }, {
      resources: { subscribe: true },
      experimental: { x: {} },
    }, {}]),
    { tools: { listChanged: true }, resources: { subscribe: true } },
  );
  assert.deepEqual(unionCapabilities([{ tools: {} }]), { tools: {} });
});

Deno.test("page() walks a merged list with opaque cursors and refuses foreign ones", () => {
  const items = Array.from({ length: 5 }, (_, i) => ({ name: String(i) }));
  const first = page(items, undefined, 2)!;
  assert.deepEqual(first.items.map((i) => i.name), ["0", "1"]);
  const second = page(items, first.nextCursor, 2)!;
  const third = page(items, second.nextCursor, 2)!;
  assert.deepEqual(third.items.map((i) => i.name), ["4"]);
  assert.equal(third.nextCursor, undefined);
  assert.equal(page(items, "garbage", 2), undefined);
  assert.equal(page(items, 7, 2), undefined);
});
