/**
 * Writes the files made from the configuration schema: config.schema.json (for YAML editors)
 * and docs/configuration.md (the reference). `deno task docs`; a test fails when they are stale.
 */
import { CONFIG_SCHEMA, type JsonSchema } from "../src/config/schema.ts";

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
    if (child.items?.properties) rows(child.items, `${path}[]`, out);
  }
  return out;
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
    `### \`transport: streamable-http\` and \`transport: sse\`: an HTTP MCP server\n\n${
      table(serverRows("streamable-http"))
    }`,
    `### \`transport: aggregate\`: several servers as one\n\n${table(serverRows("aggregate"))}`,
  ];
  return `${sections.join("\n\n")}\n`;
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url).pathname;
  Deno.writeTextFileSync(`${root}config.schema.json`, renderSchemaFile());
  Deno.writeTextFileSync(`${root}docs/configuration.md`, renderConfigurationDoc());
  console.log("wrote config.schema.json and docs/configuration.md");
}
