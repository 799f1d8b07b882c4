/**
 * The schema of what the gateway tells its operators: `audit:`, `metrics:` and `logLevel:`.
 * Mirrors observability.ts.
 */
import { duration, flag, type JsonSchema, list, LISTEN, text } from "./schema_builders.ts";

export const AUDIT_SCHEMA: JsonSchema = {
  type: "object",
  additionalProperties: false,
  description:
    'The audit trail: one "audit" log line per tools/call, prompts/get and resources/read.',
  properties: {
    enabled: flag("Write the audit trail.", true),
    arguments: flag("Include the calls' arguments (they often carry personal data).", false),
  },
};

export const METRICS_SCHEMA: JsonSchema = {
  type: "object",
  additionalProperties: false,
  description: "Prometheus metrics; without token or listen, /metrics answers 404.",
  properties: {
    token: text("Serve GET /metrics on the main listener to this bearer token.", {
      examples: ["${METRICS_TOKEN}"],
    }),
    listen: text("Serve /metrics alone on this address (keep it private).", {
      pattern: LISTEN,
      examples: ["127.0.0.1:9464"],
    }),
  },
};

export const LOG_LEVEL_SCHEMA: JsonSchema = {
  enum: ["debug", "info", "warn", "error"],
  description: "The least severe log lines written (the audit trail is written regardless).",
  default: "info",
};

export const ADMIN_SCHEMA: JsonSchema = {
  type: "object",
  additionalProperties: false,
  description:
    "The operator console (docs/console.md): people who sign in with the company identity provider and are listed here see and steer the gateway from a browser. Without admin:, its path answers 404. Needs oauth:.",
  properties: {
    emails: list("Addresses of the people who may open the console (a verified sign-in).", {
      examples: [["ops@example.com"]],
    }),
    groups: list("Groups (by oauth.idp.groupsClaim, or GitHub org/team) that may open it.", {
      examples: [["platform-admins"]],
    }),
    path: text("Where the console lives under baseUrl.", { default: "/admin" }),
    idleTimeout: duration("A console session unused this long ends.", "30m"),
    listen: text(
      "Serve the console on this address instead of the main port (e.g. loopback only), with a sign-in of its own: register URL + path + /callback at the identity provider.",
      { pattern: LISTEN, examples: ["127.0.0.1:9090"] },
    ),
    url: text(
      "With listen: the URL people open the console at; by default http:// and the listen address (required when that is not a loopback address).",
      { examples: ["https://ops.example.com"] },
    ),
  },
};
