/**
 * The gateway's packages and nothing else: deno.json (imports and deno.runtime.lock) is what
 * `deno task dev`, `start`, `check` and `compile` use and what `deno task` installs before any
 * task; deno.test.json (every import, deno.lock) is the tests' and bench's. Held here: the
 * runtime lock is deno.lock cut to deno.json's imports, the two configurations agree, main.ts
 * imports only those packages, and the start command on an empty cache fetches exactly them.
 */
import assert from "node:assert/strict";
import { runtimeLockText } from "../scripts/runtime_lock.ts";
import { within } from "./fixtures/waits.ts";

const ROOT = new URL("../", import.meta.url).pathname;

function readJson(name: string) {
  return JSON.parse(Deno.readTextFileSync(`${ROOT}${name}`));
}

Deno.test("deno.runtime.lock is deno.lock cut to the gateway's packages (deno task lock)", () => {
  assert.equal(
    Deno.readTextFileSync(`${ROOT}deno.runtime.lock`),
    runtimeLockText(ROOT),
    "out of date: run deno task lock (or deno run --no-lock -RW scripts/runtime_lock.ts)",
  );
});

Deno.test("deno.test.json has deno.json's imports at the same versions, and its compiler settings", () => {
  const gateway = readJson("deno.json");
  const tests = readJson("deno.test.json");
  for (const [name, specifier] of Object.entries(gateway.imports)) {
    assert.equal(tests.imports[name], specifier, `deno.test.json's ${name}`);
  }
  for (const key of ["compilerOptions", "unstable", "exclude"]) {
    assert.deepEqual(tests[key], gateway[key], `deno.test.json's ${key}`);
  }
  assert.deepEqual(gateway.lock, { path: "deno.runtime.lock", frozen: true });
  assert.equal(tests.lock, "deno.lock");
});

Deno.test("main.ts imports no npm package deno.json leaves out, and no test package", async () => {
  const output = await within(
    "deno info on main.ts",
    new Deno.Command("deno", {
      args: ["info", "--json", "main.ts"],
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
  const imports = Object.keys(readJson("deno.json").imports);
  for (const name of packages) {
    assert.ok(imports.includes(name), `main.ts imports ${name}, not in deno.json's imports`);
  }
  for (const testOnly of ["oidc-provider", "playwright-core", "mcp-proxy", "supergateway"]) {
    assert.ok(!packages.has(testOnly), `the gateway imports ${testOnly}`);
  }
});

/** `name@version` of every package in a Deno cache's npm folder. */
async function cachedPackages(denoDir: string): Promise<string[]> {
  const registry = `${denoDir}/npm/registry.npmjs.org`;
  const found: string[] = [];
  const versions = async (name: string) => {
    for await (const entry of Deno.readDir(`${registry}/${name}`)) {
      if (entry.isDirectory) found.push(`${name}@${entry.name}`);
    }
  };
  for await (const entry of Deno.readDir(registry)) {
    if (!entry.isDirectory) continue;
    if (!entry.name.startsWith("@")) {
      await versions(entry.name);
      continue;
    }
    for await (const scoped of Deno.readDir(`${registry}/${entry.name}`)) {
      if (scoped.isDirectory) await versions(`${entry.name}/${scoped.name}`);
    }
  }
  return found.sort();
}

Deno.test("deno task start on an empty Deno cache fetches the gateway's packages and nothing else", async () => {
  const denoDir = await Deno.makeTempDir({ prefix: "gatehouse-empty-cache-" });
  const configDir = await Deno.makeTempDir({ prefix: "gatehouse-start-" });
  try {
    const config = `${configDir}/config.yaml`;
    await Deno.writeTextFile(
      config,
      `listen: 127.0.0.1:0
storage: ":memory:"
servers:
  demo:
    transport: stdio
    command: cat
    serviceAuths: [{ type: bearer, tokens: [dev-token] }]
`,
    );
    const child = new Deno.Command("deno", {
      args: ["task", "start", "--config", config],
      cwd: ROOT,
      env: { DENO_DIR: denoDir, NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let output = "";
    const reading = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({
        write(chunk) {
          output += chunk;
          if (output.includes('"gatehouse listening"')) child.kill("SIGTERM");
        },
      }),
    );
    // The whole download from registry.npmjs.org happens inside this wait.
    const status = await within(
      "deno task start to install, listen and stop",
      child.status,
      300_000,
    );
    await reading.catch(() => {});
    assert.ok(output.includes('"gatehouse listening"'), `the gateway never listened:\n${output}`);
    assert.equal(status.code, 0, output);
    assert.doesNotMatch(output, /Ignored build scripts/);
    const lock = readJson("deno.runtime.lock");
    const locked = Object.keys(lock.npm).map((key) => key.split("_")[0]).sort();
    assert.deepEqual(await cachedPackages(denoDir), locked);
  } finally {
    await Deno.remove(denoDir, { recursive: true });
    await Deno.remove(configDir, { recursive: true });
  }
});
