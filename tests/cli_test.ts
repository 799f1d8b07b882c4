/** The command line as a user runs it: `check`, `--version`, `--help`, exit codes. */
import assert from "node:assert/strict";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const SHIPPED = new URL("../config.yaml", import.meta.url).pathname;

async function run(args: string[], env: Record<string, string> = {}) {
  const output = await new Deno.Command("deno", {
    args: ["run", "--allow-read", "--allow-env", MAIN, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("main.ts check accepts the shipped config.yaml (exit 0)", async () => {
  const result = await run(["check", "--config", SHIPPED]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /ok \(1 server: demo\)/);
});

Deno.test("main.ts check lists every error with line and hint, hides secrets (exit 1)", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/bad.yaml`;
  await Deno.writeTextFile(
    path,
    `secret: \${SECRET_FOR_TEST}\nservers:\n  a:\n    transport: stdio\n  b:\n    transport: sse\n    url: http://x\n`,
  );
  const result = await run(["check", "--config", path], { SECRET_FOR_TEST: "short-secret-value" });
  await Deno.remove(dir, { recursive: true });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /bad\.yaml: 4 errors/);
  assert.match(result.stderr, /bad\.yaml:1 secret: is shorter than 32 bytes/);
  assert.match(
    result.stderr,
    /bad\.yaml:3 servers\.a\.command: is required\n\s+hint: the program to start/,
  );
  assert.match(result.stderr, /hint: /);
  assert.ok(!result.stderr.includes("short-secret-value"));
});

Deno.test("main.ts --version, --help and a bad argument", async () => {
  assert.match((await run(["--version"])).stdout, /^gatehouse \d+\.\d+\.\d+/);
  const help = await run(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Exit codes: 0 ok, 1 invalid configuration/);
  const bad = await run(["--frobnicate"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown argument "--frobnicate"/);
  const missing = await run(["check", "--config", "/nonexistent.yaml"]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /file not found/);
});
