import assert from "node:assert/strict";
import { ConfigError } from "./issues.ts";
import { parseConfigText } from "./load.ts";

const none = () => undefined;
const OAUTH = `
baseUrl: http://localhost:8080
oauth:
  idp: { provider: oidc, issuer: "https://idp.example.com", clientId: gw, clientSecret: s3cret-s3cret, groupsClaim: groups }
  allow: { domains: [example.com] }
servers:
  wiki: { transport: stdio, command: deno }
`;

function problems(yaml: string): string {
  try {
    parseConfigText(yaml, none, "config.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.message;
  }
  assert.fail("expected a ConfigError");
}

Deno.test("parseAdmin() fills the path and idle timeout, and lower-cases addresses", () => {
  const config = parseConfigText(
    `${OAUTH}admin: { emails: [Ops@Example.com], groups: [ops] }\n`,
    none,
  );
  assert.deepEqual(config.admin, {
    emails: ["ops@example.com"],
    groups: ["ops"],
    path: "/admin",
    idleTimeoutMs: 30 * 60_000,
  });
  assert.equal(parseConfigText(OAUTH, none).admin, undefined);
});

Deno.test("parseAdmin() refuses a console nobody may open, without oauth:, or over a server's path", () => {
  assert.match(problems(`${OAUTH}admin: { path: /ops }\n`), /admin: names no administrator/);
  assert.match(
    problems(
      `servers:\n  wiki: { transport: stdio, command: deno, public: true }\nadmin: { emails: [a@b.c] }\n`,
    ),
    /admin: needs oauth: configured/,
  );
  assert.match(
    problems(`${OAUTH}admin: { emails: [a@b.c], path: /wiki }\n`),
    /admin\.path: starts with "wiki", the name of a server/,
  );
  assert.match(
    problems(`${OAUTH}admin: { emails: [a@b.c], path: /oauth/console }\n`),
    /admin\.path: starts with "oauth"/,
  );
  assert.match(problems(`${OAUTH}admin: { emails: [a@b.c], path: "/a b" }\n`), /plain segments/);
});

Deno.test("parseAdmin() takes admin.listen, its URL by default http:// on a loopback address, and asks for one elsewhere", () => {
  const local = parseConfigText(
    `${OAUTH}admin: { emails: [a@b.c], listen: "127.0.0.1:9090" }\n`,
    none,
  );
  assert.deepEqual(local.admin?.listen, { hostname: "127.0.0.1", port: 9090 });
  assert.equal(local.admin?.url, "http://127.0.0.1:9090");
  const named = parseConfigText(
    `${OAUTH}admin: { emails: [a@b.c], listen: "0.0.0.0:9090", url: "https://ops.example.com/" }\n`,
    none,
  );
  assert.equal(named.admin?.url, "https://ops.example.com");
  assert.match(
    problems(`${OAUTH}admin: { emails: [a@b.c], listen: "0.0.0.0:9090" }\n`),
    /admin\.url: is needed: the console listens on 0\.0\.0\.0/,
  );
  assert.match(
    problems(`${OAUTH}admin: { emails: [a@b.c], url: "https://ops.example.com" }\n`),
    /admin\.url: is only used with admin\.listen/,
  );
});
