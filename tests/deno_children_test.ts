/**
 * Every Deno child a test or the bench starts reads the run's Deno cache (tests/fixtures/
 * deno_dir.ts): a stdio server written `command: deno` in a test's configuration names
 * `DENO_DIR` in its `env:` (the gateway starts it from an empty environment), and a
 * `Deno.Command` that clears its environment puts `DENO_DIR` back. Static, so that a new test
 * cannot forget it; tests/share_servers_test.ts failed on a fresh machine for want of it.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;

function sources(dir: string): { path: string; text: string }[] {
  const found: { path: string; text: string }[] = [];
  for (const entry of Deno.readDirSync(`${ROOT}${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...sources(path));
    else if (entry.name.endsWith(".ts")) {
      found.push({ path, text: Deno.readTextFileSync(`${ROOT}${path}`) });
    }
  }
  return found;
}

const GIVES_CACHE = /DENO_DIR|stdioEnvYaml\(|fixtureStdio\(/;

/** The lines of the YAML entry that `command: deno` on line `at` belongs to. */
function entryOf(lines: string[], at: number): string[] {
  const line = lines[at];
  if (/\{[^}]*command: deno/.test(line)) return [line]; // a flow mapping on one line
  const indent = line.length - line.trimStart().length;
  const entry = [line];
  for (let i = at - 1; i >= 0; i--) {
    const above = lines[i];
    if (above.trim() === "" || above.length - above.trimStart().length < indent) break;
    entry.unshift(above);
  }
  for (let i = at + 1; i < lines.length; i++) {
    const below = lines[i];
    if (below.trim() === "" || below.length - below.trimStart().length < indent) break;
    entry.push(below);
  }
  return entry;
}

Deno.test("every stdio server started by deno in tests/ and bench/ is handed the run's DENO_DIR", () => {
  const missing: string[] = [];
  let seen = 0;
  for (const { path, text } of [...sources("tests"), ...sources("bench")]) {
    if (path.endsWith("deno_children_test.ts")) continue;
    const lines = text.split("\n");
    lines.forEach((line, at) => {
      if (!/command: (deno\b|\$\{COMMAND\[0\]\})/.test(line)) return;
      const entry = entryOf(lines, at);
      // Without args nothing is run: a configuration that is only parsed, never started.
      if (!entry.some((l) => /\bargs:/.test(l))) return;
      seen++;
      if (!entry.some((l) => GIVES_CACHE.test(l))) missing.push(`${path}:${at + 1}`);
    });
  }
  assert.ok(seen >= 40, `only ${seen} stdio servers found: is the scan still looking?`);
  assert.deepEqual(missing, [], "add env: { ${DENO_DIR_YAML} } (tests/fixtures/deno_dir.ts)");
});

Deno.test("every Deno.Command in tests/ and bench/ that clears its environment puts DENO_DIR back", () => {
  const missing: string[] = [];
  for (const { path, text } of [...sources("tests"), ...sources("bench")]) {
    if (path.endsWith("deno_children_test.ts")) continue;
    for (const match of text.matchAll(/clearEnv: true/g)) {
      const call = text.slice(text.lastIndexOf("new Deno.Command", match.index), match.index);
      if (!GIVES_CACHE.test(call)) missing.push(`${path} at ${match.index}`);
    }
  }
  assert.deepEqual(missing, [], "add ...DENO_DIR_ENV (tests/fixtures/deno_dir.ts) to its env");
});

Deno.test("a first test run in a new checkout prints no Ignored build scripts box", async () => {
  // Deno warns once per directory about packages whose install scripts it did not run (the
  // bench's mcp-proxy brings tldjs, whose script only refreshes a suffix list); a fresh
  // directory with the test configuration and lock shows what a new checkout's first run shows.
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-checkout-" });
  try {
    await Deno.copyFile(`${ROOT}deno.test.json`, `${dir}/deno.test.json`);
    await Deno.copyFile(`${ROOT}deno.lock`, `${dir}/deno.lock`);
    await Deno.writeTextFile(
      `${dir}/first_test.ts`,
      'import "yaml";\nDeno.test("first", () => {});\n',
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["test", "--config", "deno.test.json", "first_test.ts"],
      cwd: dir,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, text);
    assert.doesNotMatch(text, /Ignored build scripts/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("no configuration in tests/ adds an env: of its own after a fixture command that has one", () => {
  // FIXTURE_STDIO and its kind end with `env:` (the cache); a second `env:` would be a duplicate
  // key. fixtureStdio({ NAME: value }) adds variables instead.
  const doubled: string[] = [];
  for (const { path, text } of [...sources("tests"), ...sources("bench")]) {
    const lines = text.split("\n");
    lines.forEach((line, at) => {
      if (/^\s*\$\{[A-Z_]*STDIO\}\s*$/.test(line) && /^\s*env:/.test(lines[at + 1] ?? "")) {
        doubled.push(`${path}:${at + 2}`);
      }
    });
  }
  assert.deepEqual(doubled, [], "use fixtureStdio({ … }) (tests/fixtures/gateway.ts)");
});
