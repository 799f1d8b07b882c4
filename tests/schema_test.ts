/**
 * The JSON Schema (`main.ts schema`, and docs/configuration.md made from it) says exactly what
 * the validator accepts: at every mapping, the keys the validator lists for an unknown key are
 * the schema's keys; the shipped config.yaml and the test configurations pass the schema; and
 * what the validator refuses by shape, the schema refuses too.
 */
import assert from "node:assert/strict";
// @ts-types="npm:ajv@8.20.0/dist/2020.d.ts"
import { Ajv2020 } from "npm:ajv@8.20.0/dist/2020.js";
import { parse } from "yaml";
import { ConfigError } from "../src/config/issues.ts";
import { parseConfigText } from "../src/config/load.ts";
import { CONFIG_SCHEMA, type JsonSchema, SCHEMA_SERVER_KEYS } from "../src/config/schema.ts";
import { renderConfigurationDoc, renderSchemaFile } from "../scripts/config_docs.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const UNKNOWN = "zzzzzzzzzzzz";
const SECRET = "0123456789abcdef0123456789abcdef";
const env = (name: string) => ({ IDP_SECRET: "s", GATEHOUSE_SECRET: SECRET })[name];

/** The keys the validator allows at `path`, read from its hint for an unknown key there. */
function validatorKeys(yaml: string, path: string): string[] {
  try {
    parseConfigText(yaml, env, "config.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    const issue = error.issues.find((i) =>
      i.path.join(".") === `${path ? `${path}.` : ""}${UNKNOWN}`
    );
    assert.ok(issue, `no unknown-key issue at ${path}: ${error.message}`);
    return issue.hint!.replace("allowed here: ", "").split(", ").sort();
  }
  assert.fail(`the validator accepted ${UNKNOWN} at ${path}`);
}

const OAUTH = `oauth:
  idp: { provider: oidc, issuer: "https://idp.example.com", clientId: g, clientSecret: s }
  allow: { domains: [example.com] }`;

const keysOf = (schema: JsonSchema | undefined) => Object.keys(schema?.properties ?? {}).sort();
const top = CONFIG_SCHEMA.properties!;

Deno.test("the schema allows exactly the keys the validator allows, at every mapping", () => {
  const cases: [string, string, string[]][] = [
    ["", `${UNKNOWN}: 1\nservers: {}`, keysOf(CONFIG_SCHEMA)],
    ["limits", `limits: { ${UNKNOWN}: 1 }\nservers: {}`, keysOf(top.limits)],
    ["rateLimits", `rateLimits: { ${UNKNOWN}: 1 }\nservers: {}`, keysOf(top.rateLimits)],
    ["audit", `audit: { ${UNKNOWN}: 1 }\nservers: {}`, keysOf(top.audit)],
    ["metrics", `metrics: { ${UNKNOWN}: 1 }\nservers: {}`, keysOf(top.metrics)],
    ["oauth", `${OAUTH}\n  ${UNKNOWN}: 1\nservers: {}`, keysOf(top.oauth)],
    [
      "oauth.idp",
      `oauth:\n  idp: { provider: oidc, ${UNKNOWN}: 1 }\nservers: {}`,
      keysOf(top.oauth.properties!.idp),
    ],
    [
      "oauth.allow",
      `${OAUTH.replace("domains: [example.com]", `${UNKNOWN}: 1`)}\nservers: {}`,
      keysOf(top.oauth.properties!.allow),
    ],
    [
      "oauth.clientMetadataDocuments",
      `${OAUTH}\n  clientMetadataDocuments: { ${UNKNOWN}: 1 }\nservers: {}`,
      keysOf(top.oauth.properties!.clientMetadataDocuments),
    ],
    [
      "servers.a",
      `servers:\n  a: { transport: stdio, command: x, public: true, ${UNKNOWN}: 1 }`,
      SCHEMA_SERVER_KEYS.stdio.sort(),
    ],
    [
      "servers.a",
      `servers:\n  a: { transport: streamable-http, url: "http://x", public: true, ${UNKNOWN}: 1 }`,
      SCHEMA_SERVER_KEYS.http.sort(),
    ],
    [
      "servers.a",
      `servers:\n  a: { transport: sse, url: "http://x", public: true, ${UNKNOWN}: 1 }`,
      SCHEMA_SERVER_KEYS.http.sort(),
    ],
    [
      "servers.a",
      `servers:\n  b: { transport: stdio, command: x, public: true }\n  a: { transport: aggregate, servers: [b], public: true, ${UNKNOWN}: 1 }`,
      SCHEMA_SERVER_KEYS.aggregate.sort(),
    ],
    [
      "servers.a.serviceAuths.0",
      `servers:\n  a: { transport: stdio, command: x, serviceAuths: [{ type: bearer, tokens: [t], ${UNKNOWN}: 1 }] }`,
      keysOf(SCHEMA_SERVICE_AUTH("bearer")),
    ],
    [
      "servers.a.serviceAuths.0",
      `servers:\n  a: { transport: stdio, command: x, serviceAuths: [{ type: basic, username: u, password: "0123456789abcdef", ${UNKNOWN}: 1 }] }`,
      keysOf(SCHEMA_SERVICE_AUTH("basic")),
    ],
    [
      "servers.a.access",
      `${OAUTH}\nservers:\n  a: { transport: stdio, command: x, access: { ${UNKNOWN}: 1 } }`,
      keysOf(SCHEMA_SERVER_COMMON().access),
    ],
    [
      "servers.a.tools",
      `servers:\n  a: { transport: stdio, command: x, public: true, tools: { ${UNKNOWN}: 1 } }`,
      keysOf(SCHEMA_SERVER_COMMON().tools),
    ],
    [
      "servers.a.tools.rules.0",
      `servers:\n  a: { transport: stdio, command: x, public: true, tools: { rules: [{ ${UNKNOWN}: 1 }] } }`,
      keysOf(SCHEMA_SERVER_COMMON().tools.properties!.rules.items),
    ],
    [
      "servers.a.userToken",
      `${OAUTH}\nservers:\n  a: { transport: stdio, command: x, env: { T: "{{user.token}}" }, requiresUserToken: true, userToken: { kind: manual, ${UNKNOWN}: 1 } }`,
      keysOf(SCHEMA_USER_TOKEN()),
    ],
    [
      "servers.a.userToken.oauth",
      `${OAUTH}\nservers:\n  a: { transport: stdio, command: x, env: { T: "{{user.token}}" }, requiresUserToken: true, userToken: { kind: oauth, oauth: { ${UNKNOWN}: 1 } } }`,
      keysOf(SCHEMA_USER_TOKEN().properties!.oauth),
    ],
  ];
  for (const [path, yaml, schemaKeys] of cases) {
    assert.deepEqual(validatorKeys(yaml, path), schemaKeys, `keys at "${path}"`);
  }
});

/** The keys every server has, as the stdio server's branch lists them. */
function SCHEMA_SERVER_COMMON(): Record<string, JsonSchema> {
  const servers = top.servers.additionalProperties as JsonSchema;
  return servers.allOf![0].then!.properties!;
}

/** One kind of serviceAuths entry: its branch's keys. */
function SCHEMA_SERVICE_AUTH(type: string): JsonSchema {
  const item = SCHEMA_SERVER_COMMON().serviceAuths.items!;
  return item.allOf!.find((kind) => kind.if?.properties?.type?.const === type)!.then!;
}

/** The userToken mapping's schema, found in the stdio server's branch. */
function SCHEMA_USER_TOKEN(): JsonSchema {
  const servers = top.servers.additionalProperties as JsonSchema;
  return servers.allOf![0].then!.properties!.userToken;
}

function validator() {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  return ajv.compile(CONFIG_SCHEMA);
}

/** The shipped config.yaml and every example configuration in docs/examples/. */
function shippedConfigs(): { where: string; text: string }[] {
  const found = [{ where: "config.yaml", text: Deno.readTextFileSync(`${ROOT}config.yaml`) }];
  for (const entry of Deno.readDirSync(`${ROOT}docs/examples`)) {
    if (!entry.name.endsWith(".yaml")) continue;
    const where = `docs/examples/${entry.name}`;
    found.push({ where, text: Deno.readTextFileSync(`${ROOT}${where}`) });
  }
  return found;
}

Deno.test("config.yaml and the examples in the docs pass the validator and the schema", () => {
  const validate = validator();
  const configs = shippedConfigs();
  assert.ok(configs.length >= 6, `only ${configs.length} configurations found`);
  // Every ${VAR} an example uses is "set", so that only the examples' own mistakes show.
  const anyEnv = (name: string) =>
    name.includes("SECRET") ? SECRET : name === "PORT" ? "8080" : `value-of-${name}`;
  for (const { where, text } of configs) {
    try {
      parseConfigText(text, anyEnv, where);
    } catch (error) {
      assert.fail(`${where} is refused by the validator: ${(error as Error).message}`);
    }
    assert.ok(validate(parse(text)), `${where}: ${JSON.stringify(validate.errors)}`);
  }
});

Deno.test("the schema refuses what the validator refuses by shape", () => {
  const validate = validator();
  const refused = [
    { servers: { a: { transport: "carrier-pigeon" } } },
    { servers: { a: { transport: "stdio" } } },
    { servers: { a: { transport: "stdio", command: "x", url: "http://x" } } },
    { servers: { a: { transport: "sse", url: "http://x", command: "x" } } },
    { listen: "nowhere", servers: {} },
    { limits: { requestTimeout: "soon" }, servers: {} },
    { limits: { maxMessageBytes: "big" }, servers: {} },
    { rateLimits: { mcpPerUser: "fast" }, servers: {} },
    { logLevel: "chatty", servers: {} },
    { oauth: { idp: { provider: "myspace" } }, servers: {} },
    { servers: { a: { transport: "stdio", command: "x", access: {} } } },
    { servers: { a: { transport: "stdio", command: "x", tools: { deny: ["get_[a-z]"] } } } },
    { servers: { a: { transport: "stdio", command: "x", tools: { rules: [{ tools: ["x"] }] } } } },
    { servers: { a: { transport: "stdio", command: "x", requestTimeout: "soon" } } },
    { servers: { a: { transport: "stdio", command: "x", serviceAuths: [{ type: "digest" }] } } },
    {
      servers: {
        a: { transport: "stdio", command: "x", serviceAuths: [{ type: "basic", username: "u" }] },
      },
    },
    {
      servers: {
        a: {
          transport: "stdio",
          command: "x",
          serviceAuths: [{ type: "bearer", tokens: ["t"], password: "0123456789abcdef" }],
        },
      },
    },
  ];
  for (const document of refused) {
    assert.equal(validate(document), false, JSON.stringify(document));
  }
});

Deno.test("main.ts schema prints the schema", async () => {
  const output = await new Deno.Command("deno", {
    args: ["run", "--allow-read", "--allow-env", `${ROOT}main.ts`, "schema"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  assert.deepEqual(JSON.parse(new TextDecoder().decode(output.stdout)), CONFIG_SCHEMA);
});

Deno.test("config.schema.json and docs/configuration.md are up to date (deno task docs)", () => {
  assert.equal(
    Deno.readTextFileSync(`${ROOT}config.schema.json`),
    renderSchemaFile(),
    "config.schema.json is stale: run deno task docs",
  );
  assert.equal(
    Deno.readTextFileSync(`${ROOT}docs/configuration.md`),
    renderConfigurationDoc(),
    "docs/configuration.md is stale: run deno task docs",
  );
});
