/**
 * The schema of `servers:`: the keys every server has, those of each kind (stdio,
 * streamable-http and sse, aggregate) and of a person's own credential (`userToken:`), chosen
 * by `transport`. Mirrors servers.ts, server_backends.ts, server_aggregate.ts and user_token.ts.
 */
import { count, duration, flag, type JsonSchema, list, text } from "./schema_builders.ts";

/** Who a rule admits (`access:` of a server or of a tool rule). */
const ACCESS: JsonSchema = {
  type: "object",
  additionalProperties: false,
  minProperties: 1,
  properties: {
    emails: list("Email addresses (compared lower-cased).", {
      examples: [["alice@example.com"]],
    }),
    domains: list(
      "Email domains: the part after @, exactly (sub.example.com is not example.com).",
      {
        examples: [["example.com"]],
      },
    ),
    groups: list(
      "Groups: from oauth.idp.groupsClaim (compared exactly), GitHub's org and org/team-slug (lower-cased), or a serviceAuths entry's groups.",
      { examples: [["editors"]] },
    ),
  },
};

/** A list of tool-name glob patterns: `*` any characters, `?` one. */
function patterns(description: string, example: string[], absentMeansAll = false): JsonSchema {
  const { default: fallback, ...schema } = list(
    `${description} Glob patterns: * matches any characters, ? one.`,
    {
      items: { type: "string", pattern: "^[^\\s\\[\\]{}()|^$+\\\\!]{1,256}$" },
      examples: [example],
    },
  );
  return absentMeansAll ? schema : { ...schema, default: fallback };
}

/** One kind of service credential: its own keys beside type and groups. */
function serviceAuth(type: string, keys: Record<string, JsonSchema>, required: string[]) {
  return {
    if: { properties: { type: { const: type } }, required: ["type"] },
    then: {
      properties: {
        type: { const: type },
        ...keys,
        groups: list("The groups that access rules see for this credential's callers.", {
          examples: [["ci"]],
        }),
      },
      required,
      additionalProperties: false,
    },
  };
}

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
      "Credentials of scripts and CI for this server: static bearer tokens, or an HTTP Basic username and password for clients that can send nothing else (only over TLS; prefer bearer). With oauth: configured, people's OAuth tokens are accepted too.",
    default: [],
    items: {
      type: "object",
      required: ["type"],
      properties: { type: { enum: ["bearer", "basic"], description: "bearer or basic." } },
      allOf: [
        serviceAuth("bearer", {
          tokens: list("Accepted tokens; give them from the environment.", {
            examples: [["${CI_MCP_TOKEN}"]],
          }),
        }, ["tokens"]),
        serviceAuth("basic", {
          username: text("With type basic: the username (visible ASCII, no ':').", {
            examples: ["ci"],
          }),
          password: text(
            "With type basic: the password, at least 16 characters; give it from the environment.",
            { examples: ["${CI_MCP_PASSWORD}"], minLength: 16 },
          ),
        }, ["username", "password"]),
      ],
    },
  },
  access: {
    ...ACCESS,
    description:
      "Who may use this server; absent: everyone who may sign in. Any one entry admits. Checked at /authorize, at every refresh and on every request (a reload takes effect at once). Service credentials have no email: only their groups count.",
  },
  tools: {
    type: "object",
    additionalProperties: false,
    description:
      "Which tools callers see in tools/list and may call; absent: all. deny wins over everything; a tool a rule names is only for callers that rule admits.",
    properties: {
      allow: patterns("Only these tools are shown and callable; absent: every tool not denied.", [
        "get_*",
        "echo",
      ], true),
      deny: patterns("These tools are hidden from everyone and never called.", ["delete_*"]),
      pinned: {
        type: "object",
        additionalProperties: { type: "string", pattern: "^(sha256:)?[0-9a-fA-F]{64}$" },
        description:
          "Not on aggregates (pin on the member). Tool name → SHA-256 of its definition as reviewed offline (the DIGEST column of gatehouse tools list). A tool first seen with this digest is approved; with another digest, or not pinned while others are, it is a change that toolChanges decides on.",
        examples: [{ search: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" }],
      },
      rules: {
        type: "array",
        default: [],
        description:
          "Tools only for some callers: a tool matching a rule's tools is shown only to callers its access admits (matching several rules: to those every one of them admits).",
        items: {
          type: "object",
          additionalProperties: false,
          required: ["tools", "access"],
          properties: {
            tools: patterns("The tools this rule keeps for some callers.", ["write_*"]),
            access: { ...ACCESS, description: "Who may use these tools; any one entry admits." },
          },
        },
      },
    },
  },
  approvals: {
    type: "array",
    default: [],
    description:
      "Calls held until a person approves them on Gatehouse's page /approvals/{id} (signed in with the company identity provider); the client is told to wait, and the call reaches the server only once approved, exactly as approved (same person, tool and arguments), once. A call matching several rules waits for the first. Needs oauth:. In an aggregate, each member's rules apply to its tools. See docs/approvals.md.",
    items: {
      type: "object",
      additionalProperties: false,
      required: ["by"],
      properties: {
        tools: patterns("The tools whose calls wait for approval.", ["delete_*"], true),
        when: {
          enum: ["destructive"],
          description:
            "destructive: only those of these tools whose annotations say destructiveHint: true.",
        },
        by: {
          description:
            "Who approves: caller (the person calling, in the page), or { emails, groups } (only those people, never the caller themself).",
          anyOf: [{ const: "caller" }, {
            type: "object",
            additionalProperties: false,
            minProperties: 1,
            properties: {
              emails: ACCESS.properties!.emails,
              groups: ACCESS.properties!.groups,
            },
          }],
        },
        timeout: duration("How long a held call waits for a decision.", "10m"),
        notify: text(
          "A webhook (https; http only to this machine) that receives a JSON notice with the approval page's URL, never the arguments. Fetched under the same address rules as other remote fetches.",
          { examples: ["https://hooks.example.com/gatehouse"] },
        ),
      },
    },
  },
  requestTimeout: duration(
    "How long this server may take to answer a request; overrides limits.requestTimeout. In an aggregate, each member's own applies to the calls routed to it.",
  ),
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
        enum: ["mcp", "oauth", "manual", "exchange"],
        description:
          "mcp: a remote MCP server behind its own OAuth; people connect their account there, and everything else is discovered from the server (see docs/remote-servers.md). oauth: people connect their account at a service whose OAuth client you registered. manual: people paste a token. exchange: the company identity provider issues the backend a token for each person (RFC 8693, with the person's provider token kept from their sign-in; docs/identity.md); nothing for people to do.",
      },
      displayName: text("The service's name on the pages.", { examples: ["Linear"] }),
      instructions: text("For manual tokens: where to create one."),
      pattern: text("For manual tokens: a regular expression a pasted token must match.", {
        examples: ["^(secret_|ntn_)"],
      }),
      scopes: list(
        "For kind: mcp: scopes to ask the server for. Absent: the scope its 401 names, else its scopes_supported. For kind: exchange: the scope asked of the identity provider.",
      ),
      audience: text(
        "For kind: exchange: the audience the company identity provider issues the backend's tokens for.",
        { examples: ["ledger-api"] },
      ),
      resource: text(
        "For kind: exchange: an RFC 8707 resource to name in the exchange, when the provider wants one.",
      ),
      clientId: text(
        "For kind: mcp: a client registered by hand at the server's authorization server. Absent: Gatehouse's client ID metadata document when the server accepts one, else dynamic registration.",
      ),
      clientSecret: text("For kind: mcp, with clientId: its secret.", {
        examples: ["${TRACKER_CLIENT_SECRET}"],
      }),
      authorizationHosts: list(
        "For kind: mcp: host names besides the server's own that discovery may follow (its authorization server's). Nothing else is ever fetched.",
      ),
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

const PROTOCOL =
  "Which MCP revision the backend speaks. auto: learned once (Gatehouse asks server/discover; a 2026-07-28 answer means 2026-07-28, a refusal means 2025-11-25), remembered per server, and learned again when it stops working. 2025-11-25: initialize and a session, as before. 2026-07-28 (stdio or streamable-http, never sse): no session; each call carries what the client's initialize settled. Clients of either revision reach a backend of either.";

/** Keys of servers with a backend of their own (not aggregates). */
const BACKEND: Record<string, JsonSchema> = {
  forwardRoots: flag(
    "Pass the client's roots (the roots capability, roots/list, roots list_changed) on to the backend. Say false for a server that lets roots replace its own sandbox (such as server-filesystem): it then never learns the client's roots. From 2026-07-28 clients roots reach a backend only when it asks during a call (docs/clients.md).",
    true,
  ),
  protocol: { enum: ["auto", "2025-11-25", "2026-07-28"], description: PROTOCOL, default: "auto" },
  toolChanges: {
    enum: ["allow", "hold", "refuse"],
    description:
      "What a tool whose definition (description, schemas, annotations, …) changed since it was approved, or a new tool, meets. hold: left out of tools/list and its calls refused until an operator runs gatehouse tools approve; refuse: every call of this server refused until then; allow: passes, and the change is recorded. Every change is logged (tool_change) and counted. Default: hold for streamable-http and sse backends whose host is not loopback, a private address or a name without a dot; allow otherwise. gatehouse check shows the value in effect.",
  },
};

/** A legacy HTTP+SSE backend speaks 2025-11-25 at most: 2026-07-28 has no event stream. */
const SSE_BACKEND: Record<string, JsonSchema> = {
  ...BACKEND,
  protocol: {
    enum: ["auto", "2025-11-25"],
    description:
      "Which MCP revision the backend speaks; a legacy sse backend cannot speak 2026-07-28 (use streamable-http for that), so auto means 2025-11-25 here.",
    default: "auto",
  },
};

const placeholders =
  " May use {{user.id}}, {{user.email}}, {{user.groups}} (comma-separated) and (with requiresUserToken) {{user.token}}.";

const STDIO: Record<string, JsonSchema> = {
  command: text(
    "The program to start: one process per client session, unless share: says otherwise.",
    {
      examples: ["npx", "/usr/local/bin/postgres-mcp"],
    },
  ),
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
  share: {
    enum: ["session", "person", "all"],
    description:
      "Who shares one process. session: each client session starts its own (full isolation). person: one process per person serves all of that person's sessions (both revisions); people stay apart. all: a pool of `processes` serves everyone; only for servers that keep no per-person state, and never with {{user.*}} in args or env. See docs/configuration.md#sharing-a-stdio-process.",
    default: "session",
  },
  processes: count(
    "With share: all, how many processes serve everyone; sessions go to the least used.",
    1,
  ),
  processIdleTimeout: duration(
    "With share: person or all, a process with no session for this long is stopped; the next session starts it again.",
    "5m",
  ),
};

const HTTP: Record<string, JsonSchema> = {
  url: text(`The backend's MCP endpoint (…/mcp, or …/sse for legacy servers).${placeholders}`, {
    examples: ["http://10.0.0.12:3000/mcp"],
  }),
  headers: {
    type: "object",
    additionalProperties: { type: "string" },
    description:
      `Headers sent with every request to the backend; the client's own headers never are.${placeholders} Here {{user.id}} and {{user.email}} are percent-encoded where they hold %, a comma, a space or a byte a header cannot carry, as the identity headers are.`,
    default: {},
  },
  identity: {
    type: "object",
    additionalProperties: false,
    description:
      "Tell the backend who is calling, on every request (docs/identity.md). Headers of these names a client sends are never forwarded.",
    properties: {
      headers: flag(
        "X-Gatehouse-User (the person's stable id), X-Gatehouse-Email, X-Gatehouse-Groups (comma-separated, names percent-encoded where needed) and X-Gatehouse-Client (the OAuth client). Trust them only where nothing but Gatehouse can reach the backend.",
        false,
      ),
      assertion: flag(
        "X-Gatehouse-Assertion: an ES256 JWT (iss Gatehouse, aud this server's URI, sub, email, groups, client_id; 5 minutes) the backend verifies with /.well-known/gatehouse/jwks.json.",
        false,
      ),
      groups: {
        type: "array",
        items: { type: "string", pattern: "^[^\\u0000-\\u001f\\u007f]{1,256}$" },
        description:
          "Which of the person's groups the backend is told, in X-Gatehouse-Groups and the assertion's groups claim: those matching any of these glob patterns (* any characters, ? one; case and all). Absent: every group; an empty list: none. For backends whose header limit a person with many long group names would exceed (docs/identity.md).",
        examples: [["eng-*", "ledger-*"]],
      },
    },
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

export const SERVERS_SCHEMA: JsonSchema = {
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
      server("sse", { ...HTTP, ...USER_TOKEN, ...SSE_BACKEND }, ["url"]),
      server("aggregate", AGGREGATE, ["servers"]),
    ],
  },
};

/** The keys the schema allows in each kind of server, for the test that keeps it in step. */
export const SCHEMA_SERVER_KEYS = {
  stdio: Object.keys({ ...SERVER_COMMON, ...STDIO, ...USER_TOKEN, ...BACKEND }),
  http: Object.keys({ ...SERVER_COMMON, ...HTTP, ...USER_TOKEN, ...BACKEND }),
  aggregate: Object.keys({ ...SERVER_COMMON, ...AGGREGATE }),
};
