import assert from "node:assert/strict";
import { parseGrantsArgs } from "./grants.ts";
import { grantsJson, grantsTable } from "./grants_format.ts";

const DEFAULT = "./config.yaml";

Deno.test("parseGrantsArgs() reads a person by address or user id, a client, a grant, --json and --config", () => {
  assert.deepEqual(parseGrantsArgs(["list"], DEFAULT), {
    action: "list",
    json: false,
    configPath: DEFAULT,
    selector: { all: true },
  });
  assert.deepEqual(parseGrantsArgs(["list", "--user", "Alice@Example.com", "--json"], DEFAULT), {
    action: "list",
    json: true,
    configPath: DEFAULT,
    selector: { email: "Alice@Example.com" },
  });
  assert.deepEqual(
    parseGrantsArgs(["revoke", "--user=oidc:alice", "--config", "/etc/gatehouse.yaml"], DEFAULT),
    {
      action: "revoke",
      json: false,
      configPath: "/etc/gatehouse.yaml",
      selector: { user: "oidc:alice" },
    },
  );
  assert.deepEqual(
    (parseGrantsArgs(["list", "--user", "oidc:alice@example.com"], DEFAULT) as {
      selector: unknown;
    }).selector,
    { user: "oidc:alice@example.com" },
    "a subject that holds an @ is still a user id",
  );
  assert.deepEqual(
    (parseGrantsArgs(["revoke", "--client", "gh_x"], DEFAULT) as { selector: unknown }).selector,
    { client: "gh_x" },
  );
  assert.deepEqual(
    (parseGrantsArgs(["revoke", "--grant", "abc"], DEFAULT) as { selector: unknown }).selector,
    { grant: "abc" },
  );
  assert.equal((parseGrantsArgs([], DEFAULT) as { action: string }).action, "help");
  assert.equal((parseGrantsArgs(["list", "--help"], DEFAULT) as { action: string }).action, "help");
});

Deno.test("parseGrantsArgs() says what is wrong with a bad command line", () => {
  assert.equal(
    parseGrantsArgs(["revoke"], DEFAULT),
    "revoke needs --user, --client or --grant (list shows them)",
  );
  assert.equal(
    parseGrantsArgs(["revoke", "--user", "a@b.c", "--client", "x"], DEFAULT),
    "name one of --user, --client or --grant",
  );
  assert.equal(parseGrantsArgs(["list", "--user"], DEFAULT), "--user needs a value");
  assert.equal(parseGrantsArgs(["list", "--user", "--json"], DEFAULT), "--user needs a value");
  assert.equal(
    parseGrantsArgs(["drop"], DEFAULT),
    'unknown grants command "drop"; use list or revoke',
  );
  assert.equal(parseGrantsArgs(["list", "--all"], DEFAULT), 'unknown argument "--all"');
  assert.equal(
    parseGrantsArgs(["list", "--grant", "x"], DEFAULT),
    "--grant is for revoke; list shows every grant's id",
  );
});

const GRANT = {
  id: "g1AAAAAAAAAAAAAAAAAAAA",
  userId: "oidc:alice",
  email: "alice@example.com",
  clientId: "gh_client",
  clientName: "Desk\u001btop",
  audience: ["https://gw.example.com/alpha", "https://gw.example.com/beta"],
  grantedAt: Date.UTC(2026, 0, 2, 3, 4),
  expiresAt: Date.UTC(2026, 1, 2),
  issuedVia: "authorization_code" as const,
};

Deno.test("grantsTable() aligns one grant a line with server names and how each was issued, and shows control characters as ?", () => {
  const byIdJag = { ...GRANT, id: "g2AAAAAAAAAAAAAAAAAAAA", issuedVia: "id-jag" as const };
  const table = grantsTable([GRANT, byIdJag], "https://gw.example.com");
  assert.equal(
    table,
    [
      "GRANT                   USER               CLIENT                SERVERS     VIA      GRANTED (UTC)     LAST USED (UTC)",
      "g1AAAAAAAAAAAAAAAAAAAA  alice@example.com  Desk?top (gh_client)  alpha,beta  browser  2026-01-02 03:04  -",
      "g2AAAAAAAAAAAAAAAAAAAA  alice@example.com  Desk?top (gh_client)  alpha,beta  id-jag   2026-01-02 03:04  -",
    ].join("\n"),
  );
});

Deno.test("grantsJson() prints an array with ISO times and null for what is not known", () => {
  assert.deepEqual(JSON.parse(grantsJson([GRANT], "https://gw.example.com")), [{
    grant: GRANT.id,
    userId: "oidc:alice",
    email: "alice@example.com",
    clientId: "gh_client",
    clientName: "Desk\u001btop",
    servers: ["alpha", "beta"],
    grantedAt: "2026-01-02T03:04:00.000Z",
    lastUsedAt: null,
    expiresAt: "2026-02-02T00:00:00.000Z",
    issuedVia: "authorization_code",
  }]);
});
