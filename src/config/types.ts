/**
 * The resolved configuration: what the rest of the gateway reads. Every default is filled in,
 * durations are milliseconds, sizes are bytes, secrets are wrapped. The YAML a person writes is
 * `unknown` until `validateConfig` turns it into this.
 */
import type { ApprovalRule } from "./approval_types.ts";
import type { Limits } from "./limit_types.ts";
export type { ApprovalRule, ApproverRule } from "./approval_types.ts";
export type { Limits } from "./limit_types.ts";
import type { IpRange } from "../core/ip_ranges.ts";
import type { Secret } from "../core/secret.ts";
import type { EnterpriseOAuth } from "./id_jag_types.ts";
import type { Rate } from "../core/units.ts";
import type { ServerName } from "../core/ids.ts";
import type { ConfigIssue } from "./issues.ts";
import type { ServerIdentity, UserTokenConfig } from "./user_token_types.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";

/** What a client connection may do before the TCP front closes it (`connections:`). */
export interface ConnectionLimits {
  /** Open client connections at most; undefined: sized from the open-file limit at start. */
  maxConnections?: number;
  /** A request head must arrive whole within this of its first byte. */
  headerTimeoutMs: number;
  /** A request body must arrive whole within this of its head. */
  bodyTimeoutMs: number;
  /** A connection with no request under way and no bytes either way is closed after this. */
  idleTimeoutMs: number;
  /** A client that takes none of the bytes waiting for it for this long is disconnected. */
  sendTimeoutMs: number;
  /**
   * Whether the TCP front owns the port (true) or `Deno.serve` does, without the front's
   * timeouts, cap and head checks (false: behind a proxy that enforces its own).
   */
  front: boolean;
}

/** HTTPS served by the gateway itself (`tls:`). */
export interface TlsConfig {
  /** Certificate files the operator manages, read again on SIGHUP and when they change. */
  files?: { certFile: string; keyFile: string };
  /** Certificates obtained and renewed from an ACME certificate authority (RFC 8555). */
  acme?: {
    directory: string;
    email?: string;
    /** PEM file of CA certificates trusted when talking to the directory. */
    caRootsFile?: string;
    /** Renew when the certificate has less than this left. */
    renewBeforeMs: number;
    /** The name the certificate is for: baseUrl's host. */
    domain: string;
  };
  /** A plain-HTTP listener answering 308 to https (and ACME HTTP-01 challenges). */
  redirectHttp?: { hostname: string; port: number };
}

/** Where Prometheus scrapes /metrics: behind a bearer token, and/or on a listener of its own. */
export interface MetricsConfig {
  token?: Secret;
  listen?: { hostname: string; port: number };
}

/** The audit trail of calls (tools/call, prompts/get, resources/read). */
export interface AuditConfig {
  enabled: boolean;
  /** Include the call's arguments; off by default, they often carry personal data. */
  arguments: boolean;
}

/** Request rates per caller; an absent rate is not limited. */
export interface RateLimitConfig {
  /** MCP requests per person (or per bearer token). */
  mcpPerUser?: Rate;
  /** MCP requests per OAuth client (a metadata-document client: per client and person). */
  mcpPerClient?: Rate;
  /** Sign-in, consent, callbacks, token and the browser pages, per remote address. */
  oauthPerAddress?: Rate;
  /**
   * Token requests per client (a metadata-document client: per client and address), counted
   * once the client has proven itself: its secret, or for a public client its grant.
   */
  tokenPerClient?: Rate;
  /** Failed token requests per remote address; past it, every token request is refused. */
  tokenFailuresPerAddress?: Rate;
  /** Client registrations per remote address. */
  registerPerAddress?: Rate;
}

/** Who a rule admits: any one entry matching admits. Addresses and domains are lower-cased. */
export interface AccessRule {
  emails: string[];
  domains: string[];
  groups: string[];
}

/** These tools (glob patterns) only for people who pass `access`. */
export interface ToolRule {
  tools: string[];
  access: AccessRule;
}

/** Which of a server's tools a caller sees and may call (`tools:`). */
export interface ToolPolicy {
  /** Glob patterns; absent: every tool not denied. */
  allow?: string[];
  deny: string[];
  rules: ToolRule[];
}

export interface BearerAuth {
  type: "bearer";
  tokens: Secret[];
  /** The groups that access rules see for a caller with one of these tokens. */
  groups: string[];
}

/** HTTP Basic, for clients that can send nothing else. */
export interface BasicAuth {
  type: "basic";
  username: string;
  password: Secret;
  groups: string[];
}

export type ServiceAuth = BearerAuth | BasicAuth;

interface ServerCommon {
  name: ServerName;
  /** No authentication at all; refused unless said explicitly. */
  public: boolean;
  serviceAuths: ServiceAuth[];
  /** Who may use this server; absent: everyone who may sign in. */
  access?: AccessRule;
  /** Which tools callers see and may call; absent: all. */
  tools?: ToolPolicy;
  /** Overrides `limits.requestTimeout` for this server. */
  requestTimeoutMs?: number;
  /** Calls held until a person approves them (`approvals:`); absent: none. */
  approvals?: ApprovalRule[];
  /**
   * Present when the backend acts as the person (`requiresUserToken: true`): how each person
   * supplies their own credential, injected as `{{user.token}}`.
   */
  userToken?: UserTokenConfig;
}

export type {
  ExchangeUserToken,
  ManualUserToken,
  McpUserToken,
  OAuthUserToken,
  ServerIdentity,
  TokenAuthMethod,
  UserTokenConfig,
} from "./user_token_types.ts";

/**
 * Which MCP revision the gateway speaks to a backend: `auto` learns it (a `server/discover`
 * probe, remembered per server, probed again when it stops working), the others fix it.
 */
export type BackendProtocol = "auto" | "2025-11-25" | "2026-07-28";

/**
 * What the gateway does with a tool whose definition changed since it was approved, or that is
 * new: `allow` passes it (and records the change), `hold` leaves it out of tools/list and
 * refuses its calls until an operator approves it, `refuse` also stops every call of the
 * server until then.
 */
export type ToolChanges = "allow" | "hold" | "refuse";

/** What every server with a backend of its own (not an aggregate) has. */
interface BackendCommon extends ServerCommon {
  /** `toolChanges:`, or its default (hold for a remote HTTP host, allow otherwise). */
  toolChanges: ToolChanges;
  /** True when `toolChanges` is the default, so `check` can say why it is what it is. */
  toolChangesDefaulted: boolean;
  /**
   * `tools.pinned:`: tool name → SHA-256 of its approved definition, reviewed offline. With
   * pins, a tool first seen with another digest, or without a pin, is a change to approve.
   */
  toolPins?: Record<string, string>;
  /** The revision the backend speaks; `auto` unless said (never 2026-07-28 over `sse`). */
  protocol: BackendProtocol;
  /**
   * Pass the client's roots on to the backend (`roots` capability, `roots/list`,
   * `notifications/roots/list_changed`). Off for a backend whose roots would widen its sandbox.
   */
  forwardRoots: boolean;
  /**
   * Values substituted from `${VAR}` into this server's args, env, url or headers: hidden
   * (with the person's token, header values and the master secret) in what the gateway logs
   * from the backend.
   */
  secretValues: Secret[];
}

export interface StdioServerConfig extends BackendCommon {
  transport: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Who shares one process (server_share.ts): each session its own, a person's, everyone's. */
  share: ShareMode;
  /** With `share: all`, how many processes serve everyone (sessions spread over them). */
  processes: number;
  /** A shared process with no session for this long is stopped (started again when needed). */
  processIdleTimeoutMs: number;
}

/** Who shares one stdio process: `session` (none), `person`, or `all`. */
export type ShareMode = "session" | "person" | "all";

export interface HttpServerConfig extends BackendCommon {
  transport: "streamable-http" | "sse";
  url: string;
  headers: Record<string, string>;
  /** What the backend is told of who calls, beside `headers` (identity.md). */
  identity: ServerIdentity;
}

/** A server that proxies to one backend. */
export type BackendServerConfig = StdioServerConfig | HttpServerConfig;

/** One endpoint combining several backends' tools, prompts and resources. */
export interface AggregateServerConfig extends ServerCommon {
  transport: "aggregate";
  /** Member servers, in the configured order (it decides clashes). */
  members: ServerName[];
  /** Between member and tool name: "linear.create_issue". */
  delimiter: string;
  /** How long a member's lists are reused before they are asked again. */
  cacheTtlMs: number;
}

export type ServerConfig = BackendServerConfig | AggregateServerConfig;

export type IdpProvider = "oidc" | "google" | "azure" | "github";

export interface IdpConfig {
  provider: IdpProvider;
  /** OIDC issuer with discovery; filled in for google and azure. Unused for github. */
  issuer?: string;
  /** Entra tenant id or domain (azure). */
  tenant?: string;
  clientId: string;
  clientSecret: Secret;
  scopes: string[];
  /** oidc and azure: the ID-token or userinfo claim listing the person's groups. */
  groupsClaim?: string;
  /** GitHub web and API roots; differ from github.com only for GitHub Enterprise Server. */
  githubUrl: string;
  githubApiUrl: string;
}

/** Who may get a token: any one rule matching admits the person. */
export interface AccessPolicy {
  domains: string[];
  emails: string[];
  orgs: string[];
  /** Groups named at sign-in (`groupsClaim`, GitHub's `org` and `org/team-slug`). */
  groups: string[];
  /** Everyone the identity provider authenticates; must be said explicitly. */
  anyone: boolean;
}

export interface ClientMetadataDocumentsConfig {
  enabled: boolean;
  /** Hosts allowed to resolve to private or loopback addresses (they are refused otherwise). */
  allowPrivateHosts: string[];
  timeoutMs: number;
  maxBytes: number;
}

export interface OAuthConfig extends EnterpriseOAuth {
  accessTokenTtlMs: number;
  refreshTokenTtlMs: number;
  authorizationCodeTtlMs: number;
  /** How long a person has to finish logging in after /authorize. */
  authorizationRequestTtlMs: number;
  /** A registered client that never obtains a token is forgotten after this long. */
  unusedClientTtlMs: number;
  /** The browser's single sign-on session. */
  ssoSessionTtlMs: number;
  /** Groups older than this are read again from the identity provider when tokens are issued. */
  groupsMaxAgeMs: number;
  idp: IdpConfig;
  allow: AccessPolicy;
  clientMetadataDocuments: ClientMetadataDocumentsConfig;
  /** Private-use redirect URI schemes of native apps admitted at registration (e.g. "cursor"). */
  redirectSchemes: string[];
}

/** How a PostgreSQL storage is reached (ignored for Deno KV). */
export interface StorageOptions {
  /** Connections each replica keeps at most. */
  pool: number;
  /** Bounds connecting, and each statement (the server's statement_timeout). */
  timeoutMs: number;
  /** PEM file of the CA the server's certificate must chain to (sslmode verify-ca/full). */
  caFile?: string;
}

export interface ResolvedConfig {
  listen: { hostname: string; port: number };
  /** Public URL without a trailing slash; server X's service URI is `${baseUrl}/X`. */
  baseUrl: string;
  /** Deno KV path, ":memory:", a KV Connect URL, or postgres://… (replicas). */
  storage: string;
  storageOptions: StorageOptions;
  /** Master secret; absent means "generate one and keep it in storage". */
  secret?: Secret;
  /** Earlier master secrets: tokens they signed still verify while clients move over. */
  previousSecrets: Secret[];
  /** Origins (scheme://host[:port]) allowed on MCP endpoints besides the gateway's own. */
  allowedOrigins: string[];
  /**
   * This replica's name, put in front of its session ids so that a load balancer can send a
   * session's requests to the replica holding it.
   */
  replicaId?: string;
  limits: Limits;
  connections: ConnectionLimits;
  /** HTTPS in the binary; absent: plain HTTP (behind a proxy, or on localhost). */
  tls?: TlsConfig;
  /** Proxies whose Forwarded / X-Forwarded-For name the real client; empty: none. */
  trustedProxies: IpRange[];
  rateLimits: RateLimitConfig;
  audit: AuditConfig;
  metrics: MetricsConfig;
  /** How long shutdown waits for streams and backends before it kills them. */
  shutdownGraceMs: number;
  logLevel: LogLevel;
  servers: Map<ServerName, ServerConfig>;
  /** The authorization server; absent means OAuth endpoints answer 404. */
  oauth?: OAuthConfig;
  admin?: import("./admin_config.ts").AdminConfig;
  /** What the file does that is allowed but risky (path, line, hint): logged at start-up. */
  warnings: ConfigIssue[];
}
