/** The command line as a user runs it: `check`, `health`, `--version`, `--help`, exit codes. */
import assert from "node:assert/strict";
import { compileArgs, RUNTIME_PERMISSIONS, stampCommit } from "../scripts/compile.ts";
import { refusedPort } from "./fixtures/ports.ts";
import { within } from "./fixtures/waits.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const SHIPPED = new URL("../config.yaml", import.meta.url).pathname;

async function run(args: string[], env: Record<string, string> = {}) {
  const output = await new Deno.Command("deno", {
    args: ["run", "--allow-read", "--allow-env", "--allow-net=127.0.0.1", MAIN, ...args],
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

Deno.test("main.ts check lists every error with line and hint, hides secrets (exit 78)", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/bad.yaml`;
  await Deno.writeTextFile(
    path,
    `secret: \${SECRET_FOR_TEST}\nservers:\n  a:\n    transport: stdio\n  b:\n    transport: sse\n    url: http://x\n`,
  );
  const result = await run(["check", "--config", path], { SECRET_FOR_TEST: "short-secret-value" });
  await Deno.remove(dir, { recursive: true });
  assert.equal(result.code, 78);
  assert.match(result.stderr, /bad\.yaml: 4 errors/);
  assert.match(result.stderr, /bad\.yaml:1 secret: is shorter than 32 bytes/);
  assert.match(
    result.stderr,
    /bad\.yaml:3 servers\.a\.command: is required\n\s+hint: the program to start/,
  );
  assert.match(result.stderr, /hint: /);
  assert.ok(!result.stderr.includes("short-secret-value"));
});

Deno.test("main.ts check warns of {{user.token}} in a stdio server's args with line and hint, and still accepts it (exit 0)", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/args.yaml`;
  await Deno.writeTextFile(
    path,
    `baseUrl: https://gatehouse.example.com
oauth:
  idp: { provider: oidc, issuer: "https://login.example.com", clientId: g, clientSecret: s }
  allow: { domains: [example.com] }
servers:
  tracker:
    transport: stdio
    command: tracker-mcp
    args: [--verbose, "--token={{user.token}}"]
    requiresUserToken: true
trustedProxies: [127.0.0.1] # so that the warning asked about is the only one
`,
  );
  const result = await run(["check", "--config", path]);
  await Deno.remove(dir, { recursive: true });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /ok \(1 server: tracker\)/);
  assert.match(result.stderr, /args\.yaml: 1 warning\n/);
  assert.match(
    result.stderr,
    /args\.yaml:9 servers\.tracker\.args\[1\]: puts the person's token on the backend's command line\n\s+hint: pass it in env: instead; args are visible to every local user in ps/,
  );
});

Deno.test("main.ts check refuses {{user.*}} in a server shared by everyone, and warns that share: all shares state (exit 78, then 0)", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/share.yaml`;
  const server = (args: string) =>
    `servers:
  notes:
    transport: stdio
    command: notes-mcp
    args: ${args}
    env: { STORE: /var/notes }
    public: true
    share: all
    processes: 4
`;
  await Deno.writeTextFile(path, server(`["--owner={{user.email}}"]`));
  const refused = await run(["check", "--config", path]);
  assert.equal(refused.code, 78, refused.stderr);
  assert.match(
    refused.stderr,
    /share\.yaml:5 servers\.notes\.args\[0\]: share: all cannot carry one person's values: uses \{\{user\.\*\}\} placeholders\n\s+hint: a process shared by everyone cannot carry one person's values: say share: person/,
  );
  await Deno.writeTextFile(path, server(`[--readonly]`));
  const accepted = await run(["check", "--config", path]);
  await Deno.remove(dir, { recursive: true });
  assert.equal(accepted.code, 0, accepted.stderr);
  assert.match(
    accepted.stderr,
    /share\.yaml:8 servers\.notes\.share: everyone's sessions share the same processes: whatever the server keeps \(files, memory, caches, logins\) is seen by every person/,
  );
});

Deno.test("main.ts --version, --help and a bad argument", async () => {
  assert.match((await run(["--version"])).stdout, /^gatehouse \d+\.\d+\.\d+ \(commit dev\)\n$/);
  const help = await run(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Exit codes: 0 ok, 78 invalid configuration, 64 bad command line/);
  const bad = await run(["--frobnicate"]);
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /unknown argument "--frobnicate"/);
  const missing = await run(["check", "--config", "/nonexistent.yaml"]);
  assert.equal(missing.code, 78);
  assert.match(missing.stderr, /file not found/);
});

Deno.test("main.ts health exits 0 when /health answers 200, 3 when nothing answers", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) =>
      new URL(request.url).pathname === "/health"
        ? Response.json({ status: "ok" })
        : new Response("no", { status: 404 }),
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  try {
    const ok = await run(["health", "--url", `${base}/health`]);
    assert.equal(ok.code, 0, ok.stderr);
    const notFound = await run(["health", "--url", `${base}/nowhere`]);
    assert.equal(notFound.code, 3);
    assert.match(notFound.stderr, /answered 404/);
  } finally {
    await within("the health target to shut down", server.shutdown());
  }
  const nobody = await run(["health", "--url", `http://127.0.0.1:${await refusedPort()}/health`]);
  assert.equal(nobody.code, 3);
  assert.match(nobody.stderr, /did not answer/);
});

Deno.test("deno task compile stamps the commit and bakes in only the permissions Gatehouse needs", () => {
  const source = Deno.readTextFileSync(new URL("../src/version.ts", import.meta.url));
  assert.match(stampCommit(source, "0123abcd4567"), /export const COMMIT = "0123abcd4567";/);
  assert.match(stampCommit(source, "0123abcd4567-dirty"), /COMMIT = "0123abcd4567-dirty"/);
  assert.throws(() => stampCommit(source, '"; Deno.exit(); "'), /not a commit/);
  const args = compileArgs(["--target", "x86_64-unknown-linux-gnu"]);
  assert.deepEqual(args.filter((a) => a.startsWith("--allow")), [
    "--allow-net",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-run",
  ]);
  assert.ok(!args.includes("-A") && !args.includes("--allow-all"));
  assert.ok(args.includes("--no-prompt") && args.includes("--unstable-kv"));
  assert.deepEqual(args.slice(-3), ["--target", "x86_64-unknown-linux-gnu", "main.ts"]);
  assert.equal(args.at(-1), "main.ts");
  assert.deepEqual(RUNTIME_PERMISSIONS.filter((p) => p === "--allow-sys"), []);
});

Deno.test("main.ts check shows the toolChanges in effect for each server, and why", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/tools.yaml`;
  await Deno.writeTextFile(
    path,
    `servers:
  vendor: { transport: streamable-http, url: "https://mcp.vendor.example/mcp", public: true }
  local: { transport: stdio, command: local-mcp, public: true }
  strict:
    transport: streamable-http
    url: "http://10.0.0.5/mcp"
    public: true
    toolChanges: refuse
    tools: { pinned: { search: "${"ab".repeat(32)}" } }
  both: { transport: aggregate, servers: [vendor, local], public: true }
`,
  );
  const result = await run(["check", "--config", path]);
  await Deno.remove(dir, { recursive: true });
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    / {2}vendor: toolChanges hold \(default: its host may be someone else's\)\n/,
  );
  assert.match(
    result.stdout,
    / {2}local: toolChanges allow \(default: a local or private backend\)\n/,
  );
  assert.match(result.stdout, / {2}strict: toolChanges refuse \(as configured, 1 pinned\)\n/);
  assert.ok(!result.stdout.includes("both: toolChanges"), "an aggregate's members decide");
});

Deno.test("deno task gatehouse runs the operator commands from a checkout, as the binary does", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-task-" });
  try {
    const kv = await Deno.openKv(`${dir}/gatehouse.kv`);
    kv.close();
    const config = `${dir}/config.yaml`;
    await Deno.writeTextFile(
      config,
      `storage: ${dir}/gatehouse.kv\nservers:\n  a: { transport: stdio, command: x, public: true }\n`,
    );
    // Exactly what the README shows: the task, `--`, then the binary's own arguments.
    const output = await new Deno.Command("deno", {
      args: ["task", "gatehouse", "--", "tools", "list", "--config", config],
      cwd: new URL("../", import.meta.url).pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    assert.equal(output.code, 0, decode(output.stderr));
    assert.match(decode(output.stdout) + decode(output.stderr), /no tool definitions recorded yet/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main.ts check validates oauth.idJag and says where jwks_uri is looked at (exit 78, then 0)", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/idjag.yaml`;
  const config = (idJag: string) =>
    `servers:
  tracker: { transport: stdio, command: tracker-mcp }
oauth:
  idp: { provider: oidc, issuer: "https://login.example.com", clientId: g, clientSecret: s }
  allow: { domains: [example.com] }
  idJag: ${idJag}
trustedProxies: [127.0.0.1]
`;
  await Deno.writeTextFile(path, config(`{ issuers: ["ftp://login.example.com"] }`));
  const refused = await run(["check", "--config", path]);
  assert.equal(refused.code, 78);
  assert.match(refused.stderr, /idjag\.yaml:6 oauth\.idJag\.issuers\[0\]: must be an https URL/);
  await Deno.writeTextFile(path, config("true"));
  const accepted = await run(["check", "--config", path]);
  await Deno.remove(dir, { recursive: true });
  assert.equal(accepted.code, 0, accepted.stderr);
  assert.match(
    accepted.stdout,
    / {2}idJag: ID-JAGs of https:\/\/login\.example\.com accepted \(living at most 10m\)\n/,
  );
  assert.match(accepted.stdout, /check reads no network, serve looks at start and warns/);
});

Deno.test("main.ts check warns when identity: travels over plain http to a host that is not local or private (exit 0)", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/identity.yaml`;
  const backend = (name: string, url: string, identity: string) =>
    `  ${name}:\n    transport: streamable-http\n    url: ${url}\n    identity: ${identity}\n    toolChanges: allow\n`;
  await Deno.writeTextFile(
    path,
    `baseUrl: https://gatehouse.example.com
oauth:
  idp: { provider: oidc, issuer: "https://login.example.com", clientId: g, clientSecret: s }
  allow: { domains: [example.com] }
trustedProxies: [127.0.0.1] # so that the warnings asked about are the only ones
servers:
${backend("clear", "http://tools.example.net/mcp", "{ headers: true }")}${
      backend("signed", "http://api.example.org:8080/mcp", "{ assertion: true }")
    }${backend("sealed", "https://tools.example.net/mcp", "{ headers: true, assertion: true }")}${
      backend("near", "http://10.1.2.3:9000/mcp", "{ headers: true }")
    }${backend("here", "http://127.0.0.1:9000/mcp", "{ assertion: true }")}${
      backend("plain", "http://tools.example.net/mcp", "{ headers: false }")
    }`,
  );
  const result = await run(["check", "--config", path]);
  await Deno.remove(dir, { recursive: true });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /identity\.yaml: 2 warnings\n/);
  assert.match(
    result.stderr,
    /identity\.yaml:\d+ servers\.clear\.url: tells tools\.example\.net who calls \(identity:\) over plain http, which is not this machine or a private network: anyone on the way can read it, and replay an assertion until it expires\n\s+hint: use https:\/\/ for this backend, or reach it by a loopback or private address/,
  );
  assert.match(result.stderr, /servers\.signed\.url: tells api\.example\.org who calls/);
  for (const quiet of ["sealed", "near", "here", "plain"]) {
    assert.doesNotMatch(result.stderr, new RegExp(`servers\\.${quiet}\\.url`));
  }
});
