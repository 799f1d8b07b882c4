/**
 * The resolved types of a person's own credential for a backend (`requiresUserToken`,
 * `userToken:`) and of what a backend is told of who calls (`identity:`).
 */
import type { Secret } from "../core/secret.ts";

/** A credential the person pastes on /my/tokens (an API key, a personal access token). */
export interface ManualUserToken {
  kind: "manual";
  /** The service's name as people know it ("Notion"). */
  displayName: string;
  /** Where to get the token, shown beside the form. */
  instructions?: string;
  /** A token must match this (e.g. "^(secret_|ntn_)"), checked before it is stored. */
  pattern?: string;
}

export type TokenAuthMethod = "client_secret_basic" | "client_secret_post" | "none";

/** A credential obtained by connecting the person's account with the service's OAuth server. */
export interface OAuthUserToken {
  kind: "oauth";
  displayName: string;
  instructions?: string;
  /** Authorization server with RFC 8414 / OIDC discovery; or the endpoints below. */
  issuer?: string;
  authorizationUrl?: string;
  tokenUrl?: string;
  /** RFC 7009 revocation, used when a person disconnects. */
  revocationUrl?: string;
  clientId: string;
  clientSecret?: Secret;
  scopes: string[];
  /** How the client authenticates at the token endpoint; undefined: discovered, else post. */
  tokenAuthMethod?: TokenAuthMethod;
}

/**
 * A remote MCP server that protects itself as the MCP authorization spec says: its
 * authorization server, and Gatehouse's client there, are discovered from the server itself.
 */
export interface McpUserToken {
  kind: "mcp";
  displayName: string;
  instructions?: string;
  /** Scopes to ask for; empty: the server's 401 `scope`, else its `scopes_supported`. */
  scopes: string[];
  /** A client registered by hand at the server's authorization server. */
  clientId?: string;
  clientSecret?: Secret;
  /** Hosts (lower case) besides the server's own that discovery may follow. */
  authorizationHosts: string[];
}

/**
 * A token of the company identity provider for this backend, audience-bound to it, obtained per
 * person by an RFC 8693 exchange of the person's own provider access token (kept sealed from
 * their sign-in): the backend trusts the company provider, not the gateway.
 */
export interface ExchangeUserToken {
  kind: "exchange";
  displayName: string;
  instructions?: string;
  /** The `audience` asked for at the provider's token endpoint. */
  audience: string;
  /** The `scope` asked for; empty: none named. */
  scopes: string[];
  /** RFC 8707 `resource`, when the provider wants one. */
  resource?: string;
}

export type UserTokenConfig =
  | ManualUserToken
  | OAuthUserToken
  | McpUserToken
  | ExchangeUserToken;

/**
 * `identity:`: who is calling, told to an HTTP backend on every request (identity.md): plain
 * headers, and a signed ES256 assertion its JWKS lets the backend verify.
 */
export interface ServerIdentity {
  headers: boolean;
  assertion: boolean;
  /**
   * Glob patterns (`*`, `?`, as `tools:` rules write them) naming which of the person's groups
   * the backend is told, in X-Gatehouse-Groups and the assertion's `groups`; absent: all.
   */
  groups?: string[];
}
