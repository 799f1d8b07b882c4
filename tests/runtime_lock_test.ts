/**
 * deno.runtime.lock, which `deno task dev`, `start`, `check` and `compile` run with, is deno.lock
 * cut down to what the gateway imports: up to date with deno.lock, and enough for main.ts.
 */
import assert from "node:assert/strict";
import { RUNTIME_IMPORTS, runtimeLockText } from "../scripts/runtime_lock.ts";
import { within } from "./fixtures/waits.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("deno.runtime.lock is deno.lock cut to the gateway's packages (deno task lock)", () => {
  assert.equal(
    Deno.readTextFileSync(`${ROOT}deno.runtime.lock`),
    runtimeLockText(ROOT),
    "out of date: run deno task lock",
  );
});

Deno.test("main.ts imports no npm package the runtime lock leaves out, and no test package", async () => {
  const output = await within(
    "deno info on main.ts",
    new Deno.Command("deno", {
      args: ["info", "--json", "--lock=deno.runtime.lock", "--frozen", "main.ts"],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output(),
    120_000,
  );
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  const info = JSON.parse(new TextDecoder().decode(output.stdout));
  const packages = new Set<string>();
  for (const module of info.modules as { specifier: string }[]) {
    const match = /^npm:\/?(@?[^@/]+(?:\/[^@/]+)?)/.exec(module.specifier);
    if (match) packages.add(match[1]);
  }
  assert.ok(
    packages.has("hono") && packages.has("@modelcontextprotocol/sdk"),
    [...packages].join(),
  );
  for (const name of packages) {
    assert.ok(RUNTIME_IMPORTS.includes(name), `main.ts imports ${name}, not in RUNTIME_IMPORTS`);
  }
  for (const testOnly of ["oidc-provider", "playwright-core", "mcp-proxy", "supergateway"]) {
    assert.ok(!packages.has(testOnly), `the gateway imports ${testOnly}`);
  }
});
