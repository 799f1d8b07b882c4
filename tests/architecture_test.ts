/**
 * The seams of docs/architecture.md, kept: which folder of src/ may import which, time only
 * from the injected clock, files small enough to read, and every folder named in the docs.
 * A change that needs to break one of these should change the docs and this table together.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

/** Folder → the folders (and top-level files of src/) its modules may import. */
const MAY_IMPORT: Record<string, string[]> = {
  "app.ts": ["*"],
  "app_auth_server.ts": ["*"],
  "app_id_jag.ts": ["*"],
  "app_readings.ts": ["*"],
  "app_console.ts": ["*"],
  "app_console_readings.ts": ["*"],
  "app_approvals.ts": ["*"],
  "app_identity.ts": ["*"],
  "serve.ts": ["*"],
  "cli": [
    "config",
    "core",
    "credentials",
    "crypto",
    "mcp/approvals",
    "mcp/tools",
    "net",
    "oauth",
    "store",
    "version.ts",
  ],
  "http": [
    "config",
    "core",
    "credentials",
    "crypto",
    "idp",
    "mcp/approvals",
    "mcp/front",
    "mcp/protocol",
    "mcp/sessions",
    "mcp/stateless",
    "mcp/tools",
    "oauth",
    "observability",
    "policy",
    "store",
    "web",
    "web/approvals",
  ],
  "web": ["config", "core", "credentials", "crypto", "idp", "oauth", "observability", "store"],
  // The operator console: reads and acts through the narrow interfaces of its sources.ts,
  // which app_console.ts implements; it may use the shared page helpers of web/.
  "web/admin": ["config", "core", "crypto", "idp", "oauth", "observability", "store", "web"],
  // A person's page for a held call: the records and decisions of mcp/approvals, the shared
  // page helpers and sign-in of web/.
  "web/approvals": ["core", "mcp/approvals", "oauth", "web"],
  "mcp/front": [
    "config",
    "core",
    "mcp/protocol",
    "mcp/sessions",
    "mcp/stateless",
    "mcp/translate",
    "observability",
    "sdk.ts",
  ],
  // A 2026 client's links are sessions of their own kind: stateless may use sessions, never the
  // other way round; both use tools; tools know nothing of either.
  "mcp/stateless": [
    "config",
    "core",
    "credentials",
    "crypto",
    "mcp/backends",
    "mcp/protocol",
    "mcp/sessions",
    "mcp/tools",
    "mcp/translate",
    "observability",
    "sdk.ts",
    "store",
    "version.ts",
  ],
  "mcp/sessions": [
    "config",
    "core",
    "credentials",
    "crypto",
    "mcp/approvals",
    "mcp/backends",
    "mcp/protocol",
    "mcp/tools",
    "mcp/translate",
    "observability",
    "sdk.ts",
    "store",
    "version.ts",
  ],
  // Calls held for a person's approval: rules, shared records, the wait; sessions use it.
  "mcp/approvals": [
    "config",
    "core",
    "crypto",
    "mcp/protocol",
    "mcp/translate",
    "observability",
    "policy",
    "sdk.ts",
    "store",
  ],
  "mcp/tools": [
    "config",
    "core",
    "crypto",
    "mcp/protocol",
    "mcp/translate",
    "observability",
    "sdk.ts",
    "store",
  ],
  "mcp/aggregate": [
    "config",
    "core",
    "mcp/backends",
    "mcp/protocol",
    "observability",
    "sdk.ts",
    "version.ts",
  ],
  "mcp/backends": [
    "config",
    "core",
    "mcp/protocol",
    "mcp/translate",
    "net",
    "observability",
    "sdk.ts",
  ],
  "mcp/translate": ["core", "crypto", "mcp/protocol", "sdk.ts"],
  // JSON-RPC, the protocol revisions and the credential errors: the protocol as every MCP folder
  // speaks it, knowing nothing of sessions.
  "mcp/protocol": ["core", "crypto", "sdk.ts"],
  "net": ["config", "core", "crypto", "observability", "store"],
  "oauth": ["core", "crypto", "store"],
  "policy": ["config", "core"],
  "idp": ["config", "core", "crypto"],
  "credentials": ["config", "core", "crypto", "observability", "store"],
  "store": ["core", "crypto"],
  "crypto": ["core"],
  "config": ["core"],
  "observability": ["config", "core"],
  "core": [],
  "sdk.ts": [],
  "version.ts": [],
};

const MAX_LINES = 400;

interface SourceFile {
  path: string;
  text: string;
}

async function sources(dir = "src"): Promise<SourceFile[]> {
  const found: SourceFile[] = [];
  for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await sources(path));
    else if (path.endsWith(".ts") && !path.endsWith("_test.ts")) {
      found.push({ path, text: await Deno.readTextFile(new URL(path, ROOT)) });
    }
  }
  return found;
}

/**
 * `src/mcp/front/x.ts` → `mcp/front`; `src/web/admin/x.ts` → `web/admin`; `src/app.ts` →
 * `app.ts`.
 */
function folderOf(path: string): string {
  const parts = path.split("/").slice(1);
  if (parts.length === 1) return parts[0];
  if ((parts[0] === "mcp" || parts[0] === "web") && parts.length > 2) {
    return `${parts[0]}/${parts[1]}`;
  }
  return parts[0];
}

function resolve(from: string, specifier: string): string {
  const url = new URL(specifier, new URL(from, "file:///"));
  return url.pathname.slice(1);
}

Deno.test("each folder of src/ imports only what docs/architecture.md allows it", async () => {
  const breaches: string[] = [];
  for (const file of await sources()) {
    const from = folderOf(file.path);
    const allowed = MAY_IMPORT[from];
    assert.ok(allowed, `${from} (${file.path}) is not in the architecture table`);
    for (const match of file.text.matchAll(/from "(\.[^"]+)"/g)) {
      const target = resolve(file.path, match[1]);
      if (!target.startsWith("src/")) continue;
      const to = folderOf(target);
      if (to === from || allowed.includes("*") || allowed.includes(to)) continue;
      breaches.push(`${file.path} imports ${target}`);
    }
  }
  assert.deepEqual(breaches, []);
});

Deno.test("nothing in src/ reads the time or starts a timer except through the Clock", async () => {
  const breaches: string[] = [];
  for (const file of await sources()) {
    if (file.path === "src/core/clock.ts") continue;
    file.text.split("\n").forEach((line, index) => {
      if (/Date\.now\(\)|new Date\(\)\.getTime|setInterval\(/.test(line) && !/clock\./.test(line)) {
        breaches.push(`${file.path}:${index + 1}: ${line.trim()}`);
      }
    });
  }
  assert.deepEqual(breaches, []);
});

Deno.test("every error class in src/ extends GatehouseError, with a stable code", async () => {
  const breaches = (await sources())
    .filter((file) => file.path !== "src/core/errors.ts")
    .flatMap((file) =>
      [...file.text.matchAll(/class (\w+) extends (?:Error|TypeError|RangeError)\b/g)]
        .map((match) => `${file.path}: ${match[1]}`)
    );
  assert.deepEqual(breaches, []);
});

Deno.test(`no source file in src/, nor main.ts, is longer than ${MAX_LINES} lines`, async () => {
  const main = { path: "main.ts", text: await Deno.readTextFile(new URL("main.ts", ROOT)) };
  const long = [...await sources(), main]
    .map((file) => ({ path: file.path, lines: file.text.split("\n").length - 1 }))
    .filter((file) => file.lines > MAX_LINES)
    .map((file) => `${file.path}: ${file.lines} lines`);
  assert.deepEqual(long, []);
});

Deno.test("docs/architecture.md names every folder of src/", async () => {
  const doc = await Deno.readTextFile(new URL("docs/architecture.md", ROOT));
  const folders = new Set(
    (await sources()).map((file) => file.path.split("/").slice(0, -1).join("/")),
  );
  const missing = [...folders].filter((folder) =>
    folder !== "src" && !doc.includes(`\`${folder}/`)
  );
  assert.deepEqual(missing, []);
});

/** Every circle of imports among the files of src/, each once, as `a → b → a`. */
function importCircles(files: SourceFile[]): string[] {
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const targets = [...file.text.matchAll(/from "(\.[^"]+)"/g)]
      .map((match) => resolve(file.path, match[1]))
      .filter((target) => target.startsWith("src/"));
    edges.set(file.path, [...new Set(targets)]);
  }
  // Depth-first search; a file met again while still on the path closes a circle.
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const circles = new Set<string>();
  const visit = (file: string): void => {
    state.set(file, "open");
    path.push(file);
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === "open") {
        const circle = path.slice(path.indexOf(next));
        // The same circle is found from any of its files: name it from its smallest one.
        const start = circle.indexOf([...circle].sort()[0]);
        const turned = [...circle.slice(start), ...circle.slice(0, start)];
        circles.add([...turned, turned[0]].join(" → "));
      } else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of [...edges.keys()].sort()) if (!state.has(file)) visit(file);
  return [...circles];
}

Deno.test("no two files of src/ import each other, directly or around a circle", async () => {
  assert.deepEqual(importCircles(await sources()), []);
});

Deno.test("importCircles() names a circle of type-only imports too", () => {
  const files = [
    { path: "src/mcp/a.ts", text: 'import type { B } from "./b.ts";' },
    { path: "src/mcp/b.ts", text: 'import { C } from "./front/c.ts";' },
    { path: "src/mcp/front/c.ts", text: 'export { A } from "../a.ts";' },
  ];
  assert.deepEqual(importCircles(files), [
    "src/mcp/a.ts → src/mcp/b.ts → src/mcp/front/c.ts → src/mcp/a.ts",
  ]);
});

Deno.test("src/mcp/ keeps its files in folders named by concern, none loose at its root", async () => {
  const loose = (await sources()).map((file) => file.path)
    .filter((path) => path.split("/").length === 3 && path.startsWith("src/mcp/"));
  assert.deepEqual(loose, []);
});
