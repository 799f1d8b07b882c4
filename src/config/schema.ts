/**
 * The JSON Schema of `config.yaml`: what `main.ts schema` prints for YAML editors, and the
 * source of docs/configuration.md. The validator (validate.ts) stays the authority on what is
 * accepted; a test keeps the two in step key by key.
 */
import { DEFAULT_RATE_LIMITS } from "./rate_limits.ts";

export interface JsonSchema {
  $schema?: string;
  $id?: string;
  $defs?: Record<string, JsonSchema>;
  $ref?: string;
  title?: string;
  description?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  examples?: unknown[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  if?: JsonSchema;
  then?: JsonSchema;
}

const DURATION = "^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|h|d)\\s*$";
const SIZE = "^\\s*\\d+(\\.\\d+)?\\s*(B|KB|MB|GB|KiB|MiB|GiB)\\s*$";
const RATE = "^\\s*\\d+\\s*/\\s*(s|sec|second|min|minute|h|hour|d|day)\\s*$";

const duration = (description: string, fallback?: string): JsonSchema => ({
  type: "string",
  pattern: DURATION,
  description: `${description} A duration: a number and ms, s, m, h or d.`,
  ...(fallback ? { default: fallback } : {}),
});

const size = (description: string, fallback?: string): JsonSchema => ({
  anyOf: [{ type: "string", pattern: SIZE }, { type: "integer", minimum: 1 }],
  description: `${description} A size: bytes, or a number and KB, MB, GB, KiB, MiB or GiB.`,
  ...(fallback ? { default: fallback } : {}),
});

const count = (description: string, fallback: number): JsonSchema => ({
  type: "integer",
  minimum: 1,
  description,
  default: fallback,
});

const text = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: "string",
  minLength: 1,
  description,
  ...extra,
});

const list = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: "array",
  items: { type: "string" },
  description,
  default: [],
  ...extra,
});

const flag = (description: string, fallback: boolean): JsonSchema => ({
  type: "boolean",
  description,
  default: fallback,
});

const LISTEN = "^(\\[[0-9a-fA-F:]+\\]|[A-Za-z0-9.-]+):\\d{1,5}$";

const rate = (description: string, fallback: string): JsonSchema => ({
  anyOf: [{ type: "string", pattern: RATE }, { const: "off" }, { const: false }],
  description: `${description} A rate such as "600/min", "20/s" or "100/hour", or off.`,
  default: fallback,
});

/** Keys every kind of server has. */
const SERVER_COMMON: Record<string, JsonSchema> = {
  transport: {
    enum: ["stdio", "streamable-http", "sse", "aggregate"],
    description:
      "How Gatehouse reaches the backend: a program it starts (stdio), an HTTP MCP server (streamable-http, or legacy sse), or several servers combined (aggregate).",
  },
  description: text("What this server is for; shown to people on the browser pages."),
  public: flag(
    "Serve this server without any authentication. Only for harmless demo servers.",
    false,
  ),
  serviceAuths: {
    type: "array",
    description:
      "Static bearer tokens accepted for this server (for scripts and CI). With oauth: configured, people's OAuth tokens are accepted too.",
    default: [],
    items: {
      type: "object",
      additionalProperties: false,
      required: ["type", "tokens"],
      properties: {
        type: { const: "bearer", description: "The only kind so far." },
        tokens: list("Accepted tokens; give them from the environment.", {
          examples: [["${CI_MCP_TOKEN}"]],
        }),
      },
    },
  },
};

const USER_TOKEN: Record<string, JsonSchema> = {
  requiresUserToken: flag(
    "Each person's own credential for this service is passed to the backend as {{user.token}}; people add it on /my/tokens. Needs oauth:.",
    false,
  ),
  userToken: {
    type: "object",
    additionalProperties: false,
    description: "How people get the credential that {{user.token}} stands for.",
    properties: {
      kind: {
        enum: ["oauth", "manual"],
        description: "oauth: people connect their account; manual: people paste a token.",
      },
      displayName: text("The service's name on the pages.", { examples: ["Linear"] }),
      instructions: text("For manual tokens: where to create one."),
      pattern: text("For manual tokens: a regular expression a pasted token must match.", {
        examples: ["^(secret_|ntn_)"],
      }),
      oauth: {
        type: "object",
        additionalProperties: false,
        description:
          "The service's OAuth endpoints and Gatehouse's client there. Give issuer (discovered) or authorizationUrl and tokenUrl.",
        properties: {
          issuer: text("The service's OAuth issuer; its metadata is discovered."),
          authorizationUrl: text("The service's authorization endpoint."),
          tokenUrl: text("The service's token endpoint."),
          revocationUrl: text("The service's RFC 7009 revocation endpoint, if any."),
          clientId: text("Gatehouse's client id at the service."),
          clientSecret: text("Gatehouse's client secret at the service.", {
            examples: ["${LINEAR_CLIENT_SECRET}"],
          }),
          scopes: list("Scopes to ask the service for."),
          tokenAuthMethod: {
            enum: ["client_secret_basic", "client_secret_post", "none"],
            description: "How Gatehouse authenticates at the token endpoint.",
          },
        },
      },
    },
  },
};

/** Keys of servers with a backend of their own (not aggregates). */
const BACKEND: Record<string, JsonSchema> = {
  forwardRoots: flag(
    "Pass the client's roots (the roots capability, roots/list, roots list_changed) on to the backend. Say false for a server that lets roots replace its own sandbox (such as server-filesystem): it then never learns the client's roots.",
    true,
  ),
};

const placeholders =
  " May use {{user.id}}, {{user.email}} and (with requiresUserToken) {{user.token}}.";

const STDIO: Record<string, JsonSchema> = {
  command: text("The program to start, one process per client session.", {
    examples: ["npx", "/usr/local/bin/postgres-mcp"],
  }),
  args: list(
    `Its arguments.${placeholders} Every local user sees a process's arguments (ps), so pass {{user.token}} and secrets in env instead; check and start-up warn of {{user.token}} here.`,
  ),
  env: {
    type: "object",
    additionalProperties: { type: "string" },
    description:
      `The child's whole environment: it starts from an empty one, so nothing of the gateway's (its secrets above all) leaks.${placeholders}`,
    default: {},
  },
  cwd: text("The child's working directory."),
};

const HTTP: Record<string, JsonSchema> = {
  url: text(`The backend's MCP endpoint (…/mcp, or …/sse for legacy servers).${placeholders}`, {
    examples: ["http://10.0.0.12:3000/mcp"],
  }),
  headers: {
    type: "object",
    additionalProperties: { type: "string" },
    description:
      `Headers sent with every request to the backend; the client's own headers never are.${placeholders}`,
    default: {},
  },
};

const AGGREGATE: Record<string, JsonSchema> = {
  servers: list("The member servers, by name; their tools appear as member.tool.", {
    examples: [["linear", "github"]],
  }),
  delimiter: text("What joins a member's name and its tool's name.", {
    default: ".",
    pattern: "^[A-Za-z0-9_.-]{1,3}$",
  }),
  cacheTtl: duration("How long members' tool, prompt and resource lists are cached.", "60s"),
};

function server(transport: string, keys: Record<string, JsonSchema>, required: string[]) {
  return {
    if: { properties: { transport: { const: transport } }, required: ["transport"] },
    then: {
      properties: { ...SERVER_COMMON, ...keys },
      required: ["transport", ...required],
      additionalProperties: false,
    },
  };
}

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
      examples: ["0.0.0.0:8080"],
    }),
    baseUrl: text(
      "The public URL people and clients reach the gateway at (behind a proxy, its URL). https is required with oauth: except on localhost.",
      { default: "http://<listen>", examples: ["https://mcp.example.com"] },
    ),
    storage: text(
      "Where state lives: a Deno KV file path, or a KV Connect URL (https://…) shared by replicas.",
      { default: "./data/gatehouse.kv" },
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
      "Browser origins, besides the gateway's own, allowed to call MCP endpoints directly (CORS and the Origin check), e.g. the MCP Inspector's page.",
      { examples: [["http://localhost:6274"]] },
    ),
    limits: {
      type: "object",
      additionalProperties: false,
      description: "Bounds that keep one client or backend from costing everyone else.",
      properties: {
        sessionsPerUser: count("Open client sessions one person may hold at once.", 10),
        maxSessions: count("Open client sessions across everyone.", 1_000),
        sessionIdleTimeout: duration(
          "A session with no request and no open stream for this long is ended.",
          "5m",
        ),
        requestTimeout: duration(
          "A request the backend has not answered in this long gets a JSON-RPC error.",
          "60s",
        ),
        maxMessageBytes: size(
          "Largest HTTP body or JSON-RPC message accepted from a client or a backend.",
          "4MiB",
        ),
        maxStreamBuffer: size(
          "What an SSE stream may hold for a client that reads slowly; past it the stream is cut (Streamable HTTP clients resume it). At least twice maxMessageBytes.",
          "8MiB",
        ),
      },
    },
    connections: {
      type: "object",
      additionalProperties: false,
      description:
        "What a client connection may do before the gateway closes it: how many there may be, and how slowly a client may send its request or take its answer.",
      properties: {
        max: {
          type: "integer",
          minimum: 1,
          description:
            "Open client connections at most; more get 503 and are closed. Left out: sized from the process's open-file limit (each connection costs three descriptors; 512 are kept back), at most 10,000.",
        },
        headerTimeout: duration(
          "A request head must arrive whole within this of its first byte; else 408 (or, after earlier requests on the connection, a close). A connection that sends nothing at all is idle (idleTimeout).",
          "10s",
        ),
        bodyTimeout: duration(
          "A request body must arrive whole within this of its head; else the connection is closed.",
          "30s",
        ),
        idleTimeout: duration(
          "A connection with no request under way and no bytes either way for this long is closed, one never used too. Longer than limits.requestTimeout; left out: 75s, or requestTimeout plus 15s if that is longer.",
          "75s",
        ),
        sendTimeout: duration(
          "A client that takes none of the bytes waiting for it for this long is disconnected (a client that stopped reading).",
          "60s",
        ),
      },
    },
    rateLimits: {
      type: "object",
      additionalProperties: false,
      description: "Request rates per caller, answered with 429 and Retry-After when exceeded.",
      properties: {
        mcpPerUser: rate(
          "MCP requests per person (or per bearer token).",
          DEFAULT_RATE_LIMITS.mcpPerUser,
        ),
        mcpPerClient: rate("MCP requests per OAuth client.", DEFAULT_RATE_LIMITS.mcpPerClient),
        oauthPerAddress: rate(
          "Sign-in, consent, callbacks, token and browser pages, per remote address.",
          DEFAULT_RATE_LIMITS.oauthPerAddress,
        ),
        tokenPerClient: rate(
          "Token requests per client, counted once the client has proven itself: by its secret, or (a public client) by a valid code and PKCE verifier or refresh token. A stranger naming the client's id is not counted here.",
          DEFAULT_RATE_LIMITS.tokenPerClient,
        ),
        tokenFailuresPerAddress: rate(
          "Failed token requests (any 4xx answer) per remote address; past it every token request from that address gets 429 until the bucket refills.",
          DEFAULT_RATE_LIMITS.tokenFailuresPerAddress,
        ),
        registerPerAddress: rate(
          "Client registrations per remote address.",
          DEFAULT_RATE_LIMITS.registerPerAddress,
        ),
      },
    },
    audit: {
      type: "object",
      additionalProperties: false,
      description:
        'The audit trail: one "audit" log line per tools/call, prompts/get and resources/read.',
      properties: {
        enabled: flag("Write the audit trail.", true),
        arguments: flag("Include the calls' arguments (they often carry personal data).", false),
      },
    },
    metrics: {
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
    },
    shutdownGrace: duration(
      "On SIGTERM, how long open streams and backends get before they are stopped.",
      "10s",
    ),
    logLevel: {
      enum: ["debug", "info", "warn", "error"],
      description: "The least severe log lines written (the audit trail is written regardless).",
      default: "info",
    },
    oauth: {
      type: "object",
      additionalProperties: false,
      required: ["idp"],
      description:
        "The OAuth 2.1 authorization server: people sign in with the company identity provider and clients get tokens for one server each.",
      properties: {
        idp: {
          type: "object",
          additionalProperties: false,
          required: ["provider", "clientId", "clientSecret"],
          description: "The company identity provider people sign in with.",
          properties: {
            provider: {
              enum: ["oidc", "google", "azure", "github"],
              description: "oidc (Okta, Keycloak, Auth0, …), google, azure (Entra ID) or github.",
            },
            issuer: text("With provider oidc: the issuer URL; its metadata is discovered.", {
              examples: ["https://login.example.com/realms/staff"],
            }),
            tenant: text(
              "With provider azure: your tenant id or domain (common, organizations and consumers are refused).",
            ),
            clientId: text("Gatehouse's client id at the identity provider."),
            clientSecret: text("Gatehouse's client secret there.", {
              examples: ["${IDP_CLIENT_SECRET}"],
            }),
            scopes: list(
              "Scopes to ask for (default: openid email profile; GitHub: read:user user:email read:org).",
            ),
            githubUrl: text("With provider github: GitHub Enterprise's URL.", {
              default: "https://github.com",
            }),
            githubApiUrl: text("With provider github: GitHub Enterprise's API URL.", {
              default: "https://api.github.com",
            }),
          },
        },
        allow: {
          type: "object",
          additionalProperties: false,
          description:
            "Who may sign in: any one rule admits. Addresses the provider has not verified count for nothing.",
          properties: {
            domains: list("Email domains.", { examples: [["example.com"]] }),
            emails: list("Email addresses."),
            orgs: list("GitHub organisations (provider github)."),
            anyone: flag("Anyone the identity provider signs in (only for a private IdP).", false),
          },
        },
        accessTokenTtl: duration("Lifetime of access tokens.", "1h"),
        refreshTokenTtl: duration("Lifetime of refresh tokens (rotated on each use).", "30d"),
        authorizationCodeTtl: duration("Lifetime of authorization codes.", "1m"),
        authorizationRequestTtl: duration("How long a sign-in may take.", "10m"),
        unusedClientTtl: duration(
          "A registered client that never gets a token is forgotten after this long.",
          "24h",
        ),
        ssoSessionTtl: duration("How long a browser sign-in lasts.", "12h"),
        clientMetadataDocuments: {
          type: "object",
          additionalProperties: false,
          description: "Clients identified by an https URL (client ID metadata documents).",
          properties: {
            enabled: flag("Accept them.", true),
            allowPrivateHosts: list(
              "Hosts that may resolve to private addresses (otherwise refused against SSRF).",
            ),
            timeout: duration("Time to fetch a document.", "5s"),
            maxBytes: size("Largest document.", "64KiB"),
          },
        },
        redirectSchemes: list(
          "Private-use URI schemes native apps may redirect to (loopback http is always allowed).",
          { examples: [["cursor", "vscode"]] },
        ),
      },
    },
    servers: {
      type: "object",
      description:
        "The MCP servers behind the gateway, by name; each is served at /NAME/mcp and /NAME/sse.",
      additionalProperties: {
        type: "object",
        required: ["transport"],
        properties: { transport: SERVER_COMMON.transport },
        allOf: [
          server("stdio", { ...STDIO, ...USER_TOKEN, ...BACKEND }, ["command"]),
          server("streamable-http", { ...HTTP, ...USER_TOKEN, ...BACKEND }, ["url"]),
          server("sse", { ...HTTP, ...USER_TOKEN, ...BACKEND }, ["url"]),
          server("aggregate", AGGREGATE, ["servers"]),
        ],
      },
    },
  },
};

/** The keys the schema allows in each kind of server, for the test that keeps it in step. */
export const SCHEMA_SERVER_KEYS = {
  stdio: Object.keys({ ...SERVER_COMMON, ...STDIO, ...USER_TOKEN, ...BACKEND }),
  http: Object.keys({ ...SERVER_COMMON, ...HTTP, ...USER_TOKEN, ...BACKEND }),
  aggregate: Object.keys({ ...SERVER_COMMON, ...AGGREGATE }),
};
