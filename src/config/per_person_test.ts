import assert from "node:assert/strict";
import { parseConfigText } from "./load.ts";
import { dependsOnPerson, personalReasons, SERVER_KEY_RULES } from "./per_person.ts";
import { SCHEMA_SERVER_KEYS } from "./schema_servers.ts";
import type { BackendServerConfig } from "./types.ts";

Deno.test("SERVER_KEY_RULES classifies every key a server's entry may have", () => {
  const keys = new Set(Object.values(SCHEMA_SERVER_KEYS).flat());
  const unclassified = [...keys].filter((key) => !(key in SERVER_KEY_RULES));
  assert.deepEqual(
    unclassified,
    [],
    "say in src/config/per_person.ts whether each new key can make a backend's answers the person's",
  );
  const stale = Object.keys(SERVER_KEY_RULES).filter((key) => !keys.has(key));
  assert.deepEqual(stale, [], "every rule names a key the schema still has");
});

/** One server entry as `check` would resolve it (the oauth section lets it act as a person). */
function server(entry: string): BackendServerConfig {
  const text = `
baseUrl: https://gw.example.com
oauth:
  idp: { provider: oidc, issuer: https://idp.example.com, clientId: c, clientSecret: s }
  allow: { domains: [example.com] }
servers:
  fx:
${entry.trim().split("\n").map((line) => `    ${line}`).join("\n")}
`;
  const config = parseConfigText(text, () => "0123456789abcdef0123456789abcdef", "config.yaml");
  return config.servers.get("fx" as never) as BackendServerConfig;
}

/** Nothing of anyone's: everyone's process, no roots, no placeholders, no person's token. */
const SHARED_STDIO = "transport: stdio\ncommand: x\nshare: all\nforwardRoots: false";
const PERSON_STDIO = SHARED_STDIO.replace("share: all", "share: person");
const SHARED_HTTP =
  "transport: streamable-http\nurl: https://mcp.example.com/mcp\nforwardRoots: false";

Deno.test("dependsOnPerson() is false only when nothing of the person reaches the backend", () => {
  assert.equal(dependsOnPerson(server(SHARED_STDIO)), false);
  assert.equal(dependsOnPerson(server(SHARED_HTTP)), false);
});

// One row per per-person feature: what it looks like in a configuration, and the key that
// says so. A feature added to per_person.ts gets a row here.
const FEATURES: [string, string, string][] = [
  ["share: person", PERSON_STDIO, "share"],
  ["share: session", `${SHARED_STDIO.replace("share: all", "share: session")}`, "share"],
  // share: all refuses {{user.*}} in what starts its process (server_share.ts).
  ["{{user.*}} in args", `${PERSON_STDIO}\nargs: ["--as={{user.id}}"]`, "args.0"],
  ["{{user.*}} in env", `${PERSON_STDIO}\nenv: { WHO: "{{ user.email }}" }`, "env.WHO"],
  [
    "{{user.*}} in the url",
    SHARED_HTTP.replace("/mcp", "/{{user.id}}/mcp"),
    "url",
  ],
  [
    "{{user.*}} in headers",
    `${SHARED_HTTP}\nheaders: { X-User: "{{user.email}}" }`,
    "headers.X-User",
  ],
  [
    "requiresUserToken (manual)",
    `${SHARED_HTTP}\nrequiresUserToken: true\nheaders: { Authorization: "Bearer {{user.token}}" }`,
    "requiresUserToken",
  ],
  [
    "userToken kind: oauth",
    `${SHARED_HTTP}\nrequiresUserToken: true\nheaders: { Authorization: "Bearer {{user.token}}" }
userToken: { kind: oauth, displayName: D, oauth: { issuer: "https://as.example.com", clientId: c } }`,
    "userToken",
  ],
  [
    "userToken kind: mcp",
    `${SHARED_HTTP}\nrequiresUserToken: true\nuserToken: { kind: mcp, displayName: D }`,
    "userToken",
  ],
  [
    "userToken kind: exchange",
    `${SHARED_HTTP}\nrequiresUserToken: true\nuserToken: { kind: exchange, audience: ledger-api }`,
    "userToken",
  ],
  ["identity headers", `${SHARED_HTTP}\nidentity: { headers: true }`, "identity"],
  ["identity assertion", `${SHARED_HTTP}\nidentity: { assertion: true }`, "identity"],
  [
    "identity narrowed to some groups",
    `${SHARED_HTTP}\nidentity: { headers: true, groups: [eng-*] }`,
    "identity",
  ],
  [
    "identity told no groups",
    `${SHARED_HTTP}\nidentity: { assertion: true, groups: [] }`,
    "identity",
  ],
  ["{{user.groups}} in env", `${PERSON_STDIO}\nenv: { G: "{{user.groups}}" }`, "env.G"],
  [
    "forwardRoots",
    SHARED_HTTP.replace("forwardRoots: false", "forwardRoots: true"),
    "forwardRoots",
  ],
];

for (const [feature, entry, at] of FEATURES) {
  Deno.test(`personalReasons() names ${feature}`, () => {
    const reasons = personalReasons(server(entry));
    assert.ok(
      reasons.some((reason) => reason.path.join(".") === at),
      `${feature} is per person at ${at}; got ${JSON.stringify(reasons)}`,
    );
  });
}

Deno.test("every key with a personal rule has a row in FEATURES", () => {
  const personal = Object.entries(SERVER_KEY_RULES)
    .filter(([, rule]) => "personal" in rule)
    .map(([key]) => key);
  const covered = new Set(FEATURES.map(([, , at]) => at.split(".")[0]));
  assert.deepEqual(personal.filter((key) => !covered.has(key)), []);
});
