/**
 * `gatehouse check` on a file with many mistakes reports all of them in one run, in the file's
 * order, as the README promises: a server whose `transport` is missing or misspelt still has
 * its other keys checked, a missing `${VAR}` is one error (not also "shorter than 32 bytes"),
 * an unclosed `${VAR` is refused instead of becoming a literal secret, and a port past 65535
 * says so.
 */
import assert from "node:assert/strict";
import { within } from "./fixtures/waits.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

const MANY_MISTAKES = `listen: 127.0.0.1:99999
baseUrl: ftp://gateway.example.com
secret: \${GATEHOUSE_SECRET_NEVER_SET}
previousSecrets: ["\${OLD_GATEHOUSE_SECRET"]
logLevel: loud
limits:
  sessionsPerUser: many
servers:
  files:
    command: ""
    args: [--root, /srv]
    env: { TOKEN: "{{user.tokn}}" }
    serviceAuths: [{ type: bearer, tokens: [dev-token] }]
    forwardRoot: true
  api:
    transport: streamable_http
    url: not a url
    headers: { "bad header": x }
    serviceAuths: [{ type: bearer, tokens: [dev-token] }]
    requestTimeout: soon
  chat:
    transport: websocket
    public: maybe
`;

/** Each reported mistake as `line path: message`, in the order reported. */
const EXPECTED = [
  "1 listen: port 99999 is out of range",
  "2 baseUrl: must be an http or https URL",
  "3 secret: environment variable GATEHOUSE_SECRET_NEVER_SET is not set",
  "4 previousSecrets[0]: ${OLD_GATEHOUSE_SECRET is not closed",
  '5 logLevel: unknown level "loud"',
  '7 limits.sessionsPerUser: expected a whole number above 0, got "many"',
  "9 servers.files.transport: is required",
  '10 servers.files.command: expected a non-empty string, got ""',
  '12 servers.files.env.TOKEN: unknown placeholder "{{user.tokn}}"',
  '14 servers.files.forwardRoot: unknown key "forwardRoot"',
  '16 servers.api.transport: unknown transport "streamable_http"',
  '17 servers.api.url: not an http(s) URL: "not a url"',
  '18 servers.api.headers.bad header: invalid HTTP header name "bad header"',
  '20 servers.api.requestTimeout: expected a duration, got "soon"',
  "21 servers.chat: has no authentication",
  '22 servers.chat.transport: unknown transport "websocket"',
  '23 servers.chat.public: expected true or false, got "maybe"',
];

Deno.test("main.ts check reports every mistake of a file with many in one run, missing transports included", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/many.yaml`;
    await Deno.writeTextFile(path, MANY_MISTAKES);
    const output = await within(
      "main.ts check to finish",
      new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-read", "--allow-env", MAIN, "check", "--config", path],
        env: { NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output(),
    );
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 78, stderr);
    assert.match(stderr, new RegExp(`many\\.yaml: ${EXPECTED.length} errors\\n`));
    const reported = [...stderr.matchAll(/^ {2}\S*many\.yaml:(\d+ .*)$/gm)].map((m) => m[1]);
    assert.deepEqual(reported, EXPECTED);
    // The transport hint says which kind the rest of the entry was checked as.
    assert.match(stderr, /files\.transport: is required\n\s+hint: .*this entry looks like stdio/);
    assert.match(stderr, /streamable_http"\n\s+hint: .*this entry looks like streamable-http/);
    // Nothing that followed the unclosed reference is shown.
    assert.doesNotMatch(stderr, /OLD_GATEHOUSE_SECRET"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main.ts check accepts a file once its mistakes are fixed, the same servers and all", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/fixed.yaml`;
    await Deno.writeTextFile(
      path,
      `listen: 127.0.0.1:9999
secret: \${GATEHOUSE_SECRET_FOR_CHECK}
servers:
  files:
    transport: stdio
    command: files-mcp
    serviceAuths: [{ type: bearer, tokens: [dev-token] }]
  api:
    transport: streamable-http
    url: http://api.internal/mcp
    serviceAuths: [{ type: bearer, tokens: [dev-token] }]
`,
    );
    const output = await within(
      "main.ts check to finish",
      new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-read", "--allow-env", MAIN, "check", "--config", path],
        env: { NO_COLOR: "1", GATEHOUSE_SECRET_FOR_CHECK: "x".repeat(40) },
        stdout: "piped",
        stderr: "piped",
      }).output(),
    );
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    assert.match(new TextDecoder().decode(output.stdout), /ok \(2 servers: files, api\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
