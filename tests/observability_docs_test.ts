/**
 * docs/observability.md names what an operator looks for: every metric family the code
 * registers (a name followed by its help text), the `logLevel:` key as the configuration spells
 * it, and an audit line with the fields the audit trail writes.
 */
import assert from "node:assert/strict";
import { CONFIG_SCHEMA } from "../src/config/schema.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const DOC = Deno.readTextFileSync(`${ROOT}docs/observability.md`);

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) found.push(path);
  }
  return found;
}

Deno.test("docs/observability.md lists every metric family the gateway registers", () => {
  const families = new Set<string>();
  for (const file of [`${ROOT}main.ts`, ...sourceFiles(`${ROOT}src`)]) {
    const text = Deno.readTextFileSync(file);
    for (const [, name] of text.matchAll(/"(gatehouse_[a-z_]+)",\s*"[A-Z]/g)) families.add(name);
  }
  assert.ok(families.size >= 20, `only ${families.size} families found: ${[...families]}`);
  const listed = new Set([...DOC.matchAll(/^\| `(gatehouse_[a-z_]+)`/gm)].map((m) => m[1]));
  assert.deepEqual([...families].filter((name) => !listed.has(name)), [], "not in the doc");
  assert.deepEqual([...listed].filter((name) => !families.has(name)), [], "no longer registered");
});

Deno.test("docs/observability.md names configuration keys that exist, and shows an audit line", () => {
  // Every key at any depth of the schema (`share:` is a server's, `logLevel:` a top-level one).
  const keys = new Set<string>();
  const gather = (node: unknown) => {
    if (!node || typeof node !== "object") return;
    const properties = (node as { properties?: Record<string, unknown> }).properties;
    for (const key of Object.keys(properties ?? {})) keys.add(key);
    Object.values(node).forEach(gather);
  };
  gather(CONFIG_SCHEMA);
  for (const [, key] of DOC.matchAll(/`([a-zA-Z]+):`/g)) {
    assert.ok(keys.has(key), `the doc names a key "${key}:" the configuration does not have`);
  }
  const audit = [...DOC.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]))
    .find((shown) => shown.msg === "audit");
  assert.ok(audit, "no audit line shown");
  const line = audit;
  for (const field of ["time", "user", "server", "session", "method", "target", "outcome"]) {
    assert.ok(field in line, `the audit line shows no ${field}`);
  }
});
