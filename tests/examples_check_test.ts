/**
 * Every configuration the docs hand out passes `gatehouse check` as a person would run it (the
 * `check` task's command and permissions), with no error and no warning: a copied example that
 * warns teaches people to ignore warnings. Each `${VAR}` an example names is set, to a value of
 * the right shape, so that only the example's own mistakes show.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;
const SECRET = "an-example-secret-of-at-least-32-bytes";

function examples(): string[] {
  const found = ["config.yaml"];
  for (const entry of Deno.readDirSync(`${ROOT}docs/examples`)) {
    if (entry.name.endsWith(".yaml")) found.push(`docs/examples/${entry.name}`);
  }
  return found.sort();
}

function environmentFor(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [, name] of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)) {
    env[name] = name.includes("SECRET") ? SECRET : name === "PORT" ? "8080" : `value-of-${name}`;
  }
  return env;
}

async function check(file: string): Promise<{ code: number; output: string }> {
  const text = Deno.readTextFileSync(`${ROOT}${file}`);
  const result = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--lock=deno.runtime.lock",
      "--frozen",
      "--allow-read",
      "--allow-env",
      "main.ts",
      "check",
      "--config",
      file,
    ],
    cwd: ROOT,
    env: environmentFor(text),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: result.code, output: decode(result.stdout) + decode(result.stderr) };
}

Deno.test("gatehouse check accepts config.yaml and every file in docs/examples without a warning", async () => {
  const files = examples();
  assert.ok(files.length >= 10, `only ${files.length} configurations found`);
  for (const file of files) {
    const { code, output } = await check(file);
    assert.equal(code, 0, `${file} is refused:\n${output}`);
    assert.match(output, new RegExp(`${file.replaceAll(".", "\\.")}: ok \\(`), output);
    assert.doesNotMatch(output, /warning/i, `${file} warns:\n${output}`);
  }
});
