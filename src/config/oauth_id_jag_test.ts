import assert from "node:assert/strict";
import { ConfigError, type ConfigIssue } from "./issues.ts";
import { parseConfigText } from "./load.ts";

const HEAD = `servers:
  a: { transport: stdio, command: x }
oauth:
  idp: { provider: oidc, issuer: "https://idp.example.com", clientId: g, clientSecret: s }
  allow: { domains: [example.com] }
`;

function issuesOf(yaml: string): Omit<ConfigIssue, "line">[] {
  try {
    parseConfigText(yaml, () => undefined, "config.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map(({ path, message, hint }) => ({ path, message, hint }));
  }
  assert.fail("the document was accepted");
}

Deno.test("parseIdJag() trusts the sign-in provider for true, and named issuers with a lifetime otherwise", () => {
  const simple = parseConfigText(`${HEAD}  idJag: true\n`, () => undefined);
  assert.deepEqual(simple.oauth?.idJag, {
    issuers: ["https://idp.example.com"],
    maxLifetimeMs: 600_000,
  });
  const named = parseConfigText(
    `${HEAD}  idJag: { issuers: ["https://a.example.com", "https://b.example.com/t"], maxLifetime: 5m }\n`,
    () => undefined,
  );
  assert.deepEqual(named.oauth?.idJag, {
    issuers: ["https://a.example.com", "https://b.example.com/t"],
    maxLifetimeMs: 300_000,
  });
  assert.equal(parseConfigText(HEAD, () => undefined).oauth?.idJag, undefined);
});

Deno.test("parseIdJag() and parseConfiguredClients() report every mistake with its path and a hint", () => {
  assert.deepEqual(
    issuesOf(`${HEAD}  idJag: { issuers: ["http://a.example.com"], maxLifetime: 2h }\n`),
    [
      {
        path: ["oauth", "idJag", "issuers", 0],
        message: "must be an https URL",
        hint: "the issuer exactly as its ID-JAGs' iss says",
      },
      {
        path: ["oauth", "idJag", "maxLifetime"],
        message: "is longer than 1h",
        hint: "ID-JAGs are short-lived; 5m to 10m is usual",
      },
    ],
  );
  assert.deepEqual(issuesOf(`${HEAD}  idJag: { issuers: [] }\n`), [{
    path: ["oauth", "idJag", "issuers"],
    message: "lists no issuer",
    hint:
      "e.g. issuers: [https://login.example.com], or say idJag: true to trust oauth.idp's issuer",
  }]);
  assert.deepEqual(
    issuesOf(`${HEAD}  clients:
    - { id: gh_taken, secret: short }
    - { id: ok-app, secret: "0123456789abcdef0123456789abcdef", authMethod: private_key_jwt }
    - { id: ok-app, secret: "0123456789abcdef0123456789abcdef", extra: 1 }
`),
    [
      {
        path: ["oauth", "clients", 0, "id"],
        message: 'not a client id: "gh_taken"',
        hint: "letters, digits, . _ -; at most 64; not starting with gh_",
      },
      {
        path: ["oauth", "clients", 0, "secret"],
        message: "is shorter than 32 characters",
        hint: "generate one: openssl rand -base64 32",
      },
      {
        path: ["oauth", "clients", 1, "authMethod"],
        message: 'unknown method "private_key_jwt"',
        hint: "client_secret_basic or client_secret_post",
      },
      {
        path: ["oauth", "clients", 2, "extra"],
        message: 'unknown key "extra"',
        hint: "allowed here: id, secret, name, authMethod",
      },
      {
        path: ["oauth", "clients", 2, "id"],
        message: '"ok-app" is listed twice',
        hint: "give each client its own id",
      },
    ],
  );
});
