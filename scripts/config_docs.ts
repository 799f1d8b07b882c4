/**
 * Writes the files made from the configuration schema: config.schema.json (for YAML editors)
 * and docs/configuration.md (the reference). `deno task docs`; a test fails when they are stale.
 */
import { CONFIG_SCHEMA, type JsonSchema } from "../src/config/schema.ts";
import { ACCESS_PROSE } from "./config_docs_access.ts";
import { SHARE_PROSE } from "./config_docs_share.ts";

export function renderSchemaFile(): string {
  return `${JSON.stringify(CONFIG_SCHEMA, null, 2)}\n`;
}

/** A row per key: path, type, default, description, example. */
interface Row {
  path: string;
  type: string;
  fallback?: string;
  description: string;
  example?: string;
}

function typeOf(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map((v) => `\`${v}\``).join(" \\| ");
  if (schema.const !== undefined) return `\`${schema.const}\``;
  if (schema.anyOf) {
    if (schema.anyOf.some((s) => s.pattern?.includes("KiB"))) return "size";
    if (schema.anyOf.some((s) => s.pattern?.includes("min"))) return "rate or `off`";
  }
  if (schema.pattern?.includes("ms|s|m|h|d")) return "duration";
  if (schema.type === "array") {
    return schema.items?.type === "object" ? "list of mappings" : "list of strings";
  }
  if (schema.type === "object" && schema.additionalProperties !== false) return "map";
  if (schema.type === "object") return "mapping";
  if (schema.type === "integer") return "whole number";
  return String(schema.type ?? "");
}

const show = (value: unknown) => typeof value === "string" ? value : JSON.stringify(value);

function rows(schema: JsonSchema, prefix: string, out: Row[]): Row[] {
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    if (key === "$schema" && prefix === "") continue;
    const path = prefix ? `${prefix}.${key}` : key;
    out.push({
      path,
      type: typeOf(child),
      fallback: child.default === undefined ? undefined : show(child.default),
      description: child.description ?? "",
      example: child.examples?.length ? show(child.examples[0]) : undefined,
    });
    if (child.properties) rows(child, path, out);
    if (child.items) {
      const item = itemKeys(child.items);
      if (Object.keys(item).length) rows({ properties: item }, `${path}[]`, out);
    }
  }
  return out;
}

/** A list item's keys: its own, then those of its kinds (`allOf` of if/then, as serviceAuths). */
function itemKeys(item: JsonSchema): Record<string, JsonSchema> {
  const keys = { ...item.properties };
  for (const kind of item.allOf ?? []) {
    for (const [key, schema] of Object.entries(kind.then?.properties ?? {})) keys[key] ??= schema;
  }
  return keys;
}

function table(list: Row[]): string {
  const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");
  const lines = [
    "| key | type | default | what it does |",
    "|---|---|---|---|",
  ];
  for (const row of list) {
    const example = row.example ? ` Example: \`${cell(row.example)}\`.` : "";
    const fallback = row.fallback === undefined ? "—" : `\`${cell(row.fallback)}\``;
    lines.push(
      `| \`${row.path}\` | ${row.type} | ${fallback} | ${cell(row.description)}${example} |`,
    );
  }
  return lines.join("\n");
}

/** How groups reach the gateway, per identity provider (prose of docs/configuration.md). */
const GROUPS_PROSE = `## Groups from the identity provider

Rules that admit by group (\`oauth.allow.groups\`, and a server's \`access.groups\` and tool rules)
see the groups the identity provider named when the person signed in:

| provider | where the groups come from | names |
|---|---|---|
| \`oidc\` | the claim \`oauth.idp.groupsClaim\` names (\`groups\`, \`roles\`, an Auth0 claim such as \`https://example.com/groups\`; taken literally, not as a path), from the ID token, or from userinfo when the ID token lacks it | as given: \`Editors\` and \`editors\` are two groups |
| \`azure\` | the same claim of Entra's ID token (see below for the overage) | as given: group object ids unless Entra is told otherwise |
| \`github\` | organisations as \`org\` and teams as \`org/team-slug\`, from \`/user/orgs\` and \`/user/teams\` | lower-cased (GitHub ignores case); \`oauth.allow.groups\` is lower-cased with this provider |
| \`google\` | none | — |

A claim holding a list of strings gives those groups; a single string counts as one group; any
other value gives none and the log says \`the groups claim is neither a list of strings nor a string\`.
Without \`groupsClaim\` no groups are read, and \`check\` refuses \`oauth.allow.groups\` with
\`oidc\` or \`azure\` (and always with \`google\`).

**Entra ID.** Add the claim under App registration → Token configuration → Add groups claim, for
the ID token. Entra names groups by object id (a GUID): write those ids in the configuration. A
person in more groups than a token may hold (200) gets an *overage* instead: \`_claim_names\`
pointing at Microsoft Graph (\`hasgroups\` in the implicit flow). Gatehouse does not call Microsoft
Graph: the person signs in without groups and the log says \`the identity provider sent a group
overage instead of the groups\`. Choose "Groups assigned to the application" in the groups claim
(then assign the groups your rules name to the enterprise application), or define app roles,
assign them to groups, and set \`groupsClaim: roles\`: the \`roles\` claim lists only the roles of
this application and never overflows.

**GitHub.** Teams and private organisation memberships need the \`read:org\` scope, which the
default \`scopes\` include; without it GitHub refuses the team list and the person signs in with
organisations only (a GitHub App needs the organisation permission Members: read). An
organisation that restricts OAuth App access lists neither itself nor its teams until it approves
the app. Lists are read 100 a page, at most 5 pages each.

**Google** puts no groups in its ID token; its \`hd\` claim names the Workspace domain, which
\`oauth.allow.domains\` already checks through the verified address. Group membership lives in the
Cloud Identity Groups API or the Admin SDK Directory API, reachable only with a service account and
domain-wide delegation, which Gatehouse does not do. To admit Google accounts by group, sign in
through a broker that reads them (Keycloak, Dex) as an \`oidc\` provider.

**How many.** At most 200 groups (16 KiB of names) are kept per person, in the provider's order;
past that the log says \`the person belongs to more groups than the gateway keeps\`. The access
token carries in its \`groups\` claim only those of the person's groups that the configuration
names somewhere (\`oauth.allow.groups\`, every \`access.groups\` of servers and tool rules), so its
size follows the configuration, not the directory. The sign-in keeps the full list, and each
refresh recomputes the claim from the configuration of the moment: a group named after a reload
reaches the person's token at their next refresh, at most \`accessTokenTtl\` later.

**How fresh.** Groups are at most \`oauth.groupsMaxAge\` (1 hour) old when tokens are issued:
past it, the code or the refresh asks the identity provider again, with the tokens kept (sealed)
from the person's sign-in (its refresh token, \`offline_access\` being asked for where the provider
offers it; else userinfo while its access token lasts; GitHub's API). A person the provider no
longer knows loses the grant; a provider that is down leaves the last groups in place, and the log
says so. An access token issued before keeps its groups until it expires (\`accessTokenTtl\`).
See [security.md](security.md#groups-from-the-identity-provider).`;

export function renderConfigurationDoc(): string {
  const top = CONFIG_SCHEMA.properties!;
  const servers = top.servers.additionalProperties as JsonSchema;
  const branch = (transport: string) =>
    servers.allOf!.find((s) => s.if?.properties?.transport?.const === transport)!.then!;
  const serverRows = (transport: string) => rows(branch(transport), "servers.NAME", []);
  const { servers: _servers, ...gatewayKeys } = top;
  const general = rows({ properties: gatewayKeys }, "", []);
  const sections = [
    `# Configuration reference

<!-- Made by \`deno task docs\` from src/config/schema.ts; edit that file, not this one. -->

Gatehouse reads one YAML file: \`--config PATH\`, else \`$GATEHOUSE_CONFIG\`, else \`./config.yaml\`.
\`gatehouse check\` validates it and reports every problem with its path, line and a hint;
\`gatehouse schema\` prints the JSON Schema that \`config.schema.json\` holds, for editors
(\`# yaml-language-server: $schema=./config.schema.json\` on the first line).

Values may come from the environment: \`\${VAR}\` is replaced by the variable (an error if it is
not set) and \`\${VAR:-fallback}\` by the variable or the fallback. Keep secrets there, or in
the systemd \`EnvironmentFile\`, never in the file itself.

Types: a **duration** is a number and \`ms\`, \`s\`, \`m\`, \`h\` or \`d\` (\`90s\`, \`5m\`); a **size**
is bytes or a number and \`KB\`, \`MB\`, \`GB\`, \`KiB\`, \`MiB\` or \`GiB\`; a **rate** is
\`N/s\`, \`N/min\`, \`N/hour\` or \`N/day\`, or \`off\`.

Placeholders \`{{user.id}}\`, \`{{user.email}}\` and \`{{user.token}}\` in a server's \`args\`,
\`env\`, \`url\` and \`headers\` are filled per person when their session starts (\`{{user.token}}\`
needs \`requiresUserToken\`; HTTP backends get the current token on every request).

Complete, tested examples: [docs/examples/](examples/).`,
    `## The gateway\n\n${table(general)}`,
    `## Servers

\`servers\` maps a name (lower-case letters, digits, \`-\`, \`_\`) to a backend, served at
\`/NAME/mcp\` (Streamable HTTP) and \`/NAME/sse\` (legacy HTTP+SSE) whatever the backend
speaks. A server needs a way in: \`oauth:\` configured, \`serviceAuths\`, or \`public: true\`.`,
    `### \`transport: stdio\`: a program started per session\n\n${table(serverRows("stdio"))}`,
    SHARE_PROSE,
    `### \`transport: streamable-http\` and \`transport: sse\`: an HTTP MCP server\n\n${
      table(serverRows("streamable-http"))
    }`,
    `### \`transport: aggregate\`: several servers as one\n\n${table(serverRows("aggregate"))}`,
    ACCESS_PROSE,
    GROUPS_PROSE,
  ];
  return `${sections.join("\n\n")}\n`;
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url).pathname;
  Deno.writeTextFileSync(`${root}config.schema.json`, renderSchemaFile());
  Deno.writeTextFileSync(`${root}docs/configuration.md`, renderConfigurationDoc());
  console.log("wrote config.schema.json and docs/configuration.md");
}
