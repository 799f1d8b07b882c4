/**
 * The JSON Schema of `config.yaml`: what `main.ts schema` prints for YAML editors, and the
 * source of docs/configuration.md. The validator (validate.ts) stays the authority on what is
 * accepted; a test keeps the two in step key by key. This module holds the document's root and
 * its top-level scalars; each section's schema lives in the schema_*.ts module named for it.
 */
import { count, duration, type JsonSchema, list, LISTEN, text } from "./schema_builders.ts";
import { CONNECTIONS_SCHEMA, LIMITS_SCHEMA, RATE_LIMITS_SCHEMA } from "./schema_limits.ts";
import {
  ADMIN_SCHEMA,
  AUDIT_SCHEMA,
  LOG_LEVEL_SCHEMA,
  METRICS_SCHEMA,
} from "./schema_observability.ts";
import { OAUTH_SCHEMA } from "./schema_oauth.ts";
import { SERVERS_SCHEMA } from "./schema_servers.ts";
import { TLS_SCHEMA } from "./schema_tls.ts";

export type { JsonSchema } from "./schema_builders.ts";
export { SCHEMA_SERVER_KEYS } from "./schema_servers.ts";

const TRUSTED_PROXIES_SCHEMA: JsonSchema = list(
  "Addresses or CIDR ranges of the proxies in front of Gatehouse. For a connection from one of them, the client is the right-most address of Forwarded (RFC 7239), else X-Forwarded-For, that is not itself a trusted proxy; from anyone else both headers are ignored. Rate limits, the audit trail, the access log and traces use that address.",
  { examples: [["127.0.0.1", "10.0.0.0/8"]] },
);

export const CONFIG_SCHEMA: JsonSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "https://gatehouse.dev/schema/config.json",
  title: "Gatehouse configuration",
  description: "config.yaml: `${VAR}` and `${VAR:-default}` are replaced from the environment.",
  type: "object",
  additionalProperties: false,
  required: ["servers"],
  properties: {
    $schema: text("The schema this file follows, for editors."),
    listen: text("Address and port the gateway listens on.", {
      pattern: LISTEN,
      default: "127.0.0.1:8080",
      examples: ["0.0.0.0:8080", "127.0.0.1:${PORT:-8080}"],
    }),
    baseUrl: text(
      "The public URL people and clients reach the gateway at (behind a proxy, its URL). https is required with oauth: except on localhost.",
      { default: "http://<listen>", examples: ["https://mcp.example.com"] },
    ),
    storage: text(
      "Where state lives: a Deno KV file path (one machine), or a PostgreSQL URL shared by replicas (postgres://USER:${PGPASSWORD}@HOST:5432/DB?sslmode=verify-full; docs/deploy.md), or a KV Connect URL (https://…).",
      {
        default: "./data/gatehouse.kv",
        examples: [
          "./data/gatehouse.kv",
          "postgres://gatehouse:${PGPASSWORD}@db.internal:5432/gatehouse?sslmode=verify-full",
        ],
      },
    ),
    storagePool: count("PostgreSQL storage: connections each replica keeps at most.", 10),
    storageTimeout: duration(
      "PostgreSQL storage: how long connecting may take (longer is an error at start, 503 later), and each statement (the server cuts it).",
      "10s",
    ),
    storageCaFile: text(
      "PostgreSQL storage: a PEM file of the CA certificates the server's certificate must chain to (with sslmode verify-full or verify-ca; require then verifies the chain too). Absent: the roots Deno trusts.",
      { examples: ["/etc/gatehouse/db-ca.pem"] },
    ),
    secret: text(
      "The master secret (at least 32 bytes); every key is derived from it. Without one, Gatehouse generates one and keeps it in storage, beside the data it protects (whoever reads the KV file can forge tokens): configure one in production.",
      { examples: ["${GATEHOUSE_SECRET}"] },
    ),
    replicaId: text(
      "This replica's name when several share storage: session ids start with it, so a load balancer can route each session to its replica (docs/deploy.md). Empty or absent: none.",
      { pattern: "^([a-z0-9-]{1,32})?$", minLength: 0, examples: ["${HOSTNAME}", "gw-1"] },
    ),
    previousSecrets: list(
      "Earlier master secrets, still accepted to read tokens and credentials while you rotate.",
    ),
    allowedOrigins: list(
      "Browser origins, besides the gateway's own, allowed to call MCP endpoints directly (CORS and the Origin check), e.g. a web client's page that calls MCP from the browser (the MCP Inspector 1.x did; 2.x calls from its own process and needs none).",
      { examples: [["http://localhost:6274"]] },
    ),
    limits: LIMITS_SCHEMA,
    connections: CONNECTIONS_SCHEMA,
    tls: TLS_SCHEMA,
    trustedProxies: TRUSTED_PROXIES_SCHEMA,
    rateLimits: RATE_LIMITS_SCHEMA,
    audit: AUDIT_SCHEMA,
    metrics: METRICS_SCHEMA,
    shutdownGrace: duration(
      "On SIGTERM, how long open streams and backends get before they are stopped.",
      "10s",
    ),
    logLevel: LOG_LEVEL_SCHEMA,
    oauth: OAUTH_SCHEMA,
    admin: ADMIN_SCHEMA,
    servers: SERVERS_SCHEMA,
  },
};
