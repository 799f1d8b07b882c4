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
