/**
 * Gatehouse as an MCP client's authorization half, for one remote MCP server
 * (`userToken.kind: mcp`): discovery (mcp_discovery.ts, cached, found again when it stops
 * working), Gatehouse's identity there (mcp_identity.ts), and per person the authorization code
 * with PKCE S256 and `resource` (RFC 8707) in both the authorization and the token requests,
 * `iss` checked when the server advertises RFC 9207, refresh, and RFC 7009 revocation. It is a
 * `ServiceOAuthClient`, so connecting, the vault and refreshing work as for `kind: oauth`.
 */
import * as oauth from "oauth4webapi";
import type { McpUserToken } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import { withTimeout } from "../core/timeout_signal.ts";
import { discoverUpstream, type UpstreamAuthorization } from "./mcp_discovery.ts";
import { clientAuth, type UpstreamClient, type UpstreamIdentities } from "./mcp_identity.ts";
import {
  asServiceError,
  DISCOVERY_TTL_MS,
  expiresAtFrom,
  type ServiceOAuthClient,
  ServiceOAuthError,
  type ServiceTokens,
} from "./service_oauth.ts";
import { upstreamFetch } from "./upstream_fetch.ts";

/** Discovery as a whole (every step together) gives up after this long. */
export const DISCOVERY_DEADLINE_MS = 20_000;
/** What an access token may hold to be sent as `Authorization: Bearer …`: visible ASCII. */
const BEARER_TOKEN = /^[\x21-\x7E]+$/;
/** A registered client is checked with its server before a connection at most this often. */
const REGISTRATION_CHECK_MS = 10 * 60_000;

export interface McpUpstreamOptions {
  /** The server's MCP endpoint, as configured. */
  url: string;
  config: McpUserToken;
  /** Where the server's authorization server sends the person back. */
  redirectUri: string;
  identities: UpstreamIdentities;
  clock: Clock;
  /** The fetch underneath the guarded one; `fetch` by default. */
  fetch?: typeof globalThis.fetch;
}

export function createMcpUpstreamClient(options: McpUpstreamOptions): ServiceOAuthClient {
  const { config, clock, identities, redirectUri } = options;
  const serverUrl = new URL(options.url);
  const hosts = new Set([serverUrl.hostname.toLowerCase(), ...config.authorizationHosts]);
  const fetch = upstreamFetch({ hosts, clock, fetch: options.fetch });
  // The guarded fetch refuses plain http to anything but this machine; oauth4webapi's own
  // https check would refuse that too, so it is switched off here and only here.
  const requestOptions = { [oauth.customFetch]: fetch, [oauth.allowInsecureRequests]: true };
  let cached: { found: UpstreamAuthorization; at: number } | undefined;

  async function discovered(): Promise<UpstreamAuthorization> {
    if (cached && clock.now() - cached.at < DISCOVERY_TTL_MS) return cached.found;
    // Each answer has its own time limit; this bounds the several of them together, since a
    // person waits on the connect page meanwhile.
    const found = await withTimeout(
      clock,
      DISCOVERY_DEADLINE_MS,
      (signal) => discoverUpstream(serverUrl, fetch, hosts, config.scopes, signal),
    );
    cached = { found, at: clock.now() };
    return found;
  }

  /** Discovery and identity, found again after anything that says they stopped working. */
  async function withServer<T>(
    work: (found: UpstreamAuthorization, client: UpstreamClient) => Promise<T>,
    what: string,
  ): Promise<T> {
    const found = await discovered();
    let client: UpstreamClient;
    try {
      client = await identities.clientFor(config, found.server, redirectUri, fetch);
    } catch (error) {
      cached = undefined;
      throw error;
    }
    try {
      return await work(found, client);
    } catch (error) {
      const failure = asServiceError(error, what);
      if (failure.code !== "refused") cached = undefined;
      if (error instanceof oauth.ResponseBodyError && error.error === "invalid_client") {
        // The server forgot Gatehouse's registration: the next connection registers again.
        if (client.source === "registered") await identities.forget(found.server, redirectUri);
        cached = undefined;
      }
      throw failure;
    }
  }

  /** When each registered client was last seen known to its server. */
  const verified = new Map<string, number>();

  /** A registered client, or a new registration when the server has forgotten the old one. */
  async function checkedRegistration(
    found: UpstreamAuthorization,
    client: UpstreamClient,
  ): Promise<UpstreamClient> {
    if (client.source !== "registered") return client;
    const seen = verified.get(client.clientId);
    if (seen !== undefined && clock.now() - seen < REGISTRATION_CHECK_MS) return client;
    let current = client;
    if (!(await identities.stillKnown(found.server, client, redirectUri, fetch))) {
      await identities.forget(found.server, redirectUri);
      current = await identities.clientFor(config, found.server, redirectUri, fetch);
    }
    verified.set(current.clientId, clock.now());
    return current;
  }

  const asClient = (client: UpstreamClient): oauth.Client => ({ client_id: client.clientId });

  function tokens(
    result: oauth.TokenEndpointResponse,
    server: oauth.AuthorizationServer,
  ): ServiceTokens {
    // The token goes upstream in an Authorization header, which cannot carry anything else.
    if (!BEARER_TOKEN.test(result.access_token)) {
      throw new ServiceOAuthError(
        "invalid_response",
        `${server.issuer} issued an access token with characters other than visible ASCII, which no Authorization header can carry`,
      );
    }
    return {
      accessToken: result.access_token,
      refreshToken: result.refresh_token,
      expiresAt: expiresAtFrom(result.expires_in, clock.now()),
      scope: result.scope,
      issuer: server.issuer,
    };
  }

  /**
   * A code, a refresh token or a token to revoke goes only to the authorization server it came
   * from: the server may name another one since (its metadata is read again every hour and after
   * failures), and that one would receive the person's grant at the first (a mix-up, RFC 9700
   * §4.4). Refused instead, which means connecting again.
   */
  function sameIssuer(found: UpstreamAuthorization, issuer: string | undefined): void {
    if (issuer === undefined || issuer === found.server.issuer) return;
    throw new ServiceOAuthError(
      "refused",
      `the connection was made with the authorization server ${issuer}, but the server now names ${found.server.issuer}; Gatehouse sends nothing of it there: connect again`,
    );
  }

  return {
    authorizationUrl(start) {
      return withServer(async (found, given) => {
        const client = await checkedRegistration(found, given);
        const url = new URL(found.server.authorization_endpoint!);
        url.searchParams.set("client_id", client.clientId);
        url.searchParams.set("redirect_uri", start.redirectUri);
        url.searchParams.set("response_type", "code");
        const scopes = start.scopes?.length ? start.scopes : found.discoveredScopes;
        if (scopes.length) url.searchParams.set("scope", scopes.join(" "));
        url.searchParams.set("state", start.state);
        url.searchParams.set("code_challenge", start.codeChallenge);
        url.searchParams.set("code_challenge_method", "S256");
        url.searchParams.set("resource", found.resource);
        return {
          url,
          issuer: found.server.issuer,
          scope: scopes.length ? scopes.join(" ") : undefined,
        };
      }, "the authorization could not start");
    },

    exchange(finish) {
      return withServer(async (found, client) => {
        sameIssuer(found, finish.issuer);
        // Checks state, and `iss` when the server says it sends one (RFC 9207).
        const params = oauth.validateAuthResponse(
          found.server,
          asClient(client),
          finish.callbackUrl,
          finish.state,
        );
        const response = await oauth.authorizationCodeGrantRequest(
          found.server,
          asClient(client),
          clientAuth(client),
          params,
          finish.redirectUri,
          finish.codeVerifier,
          { ...requestOptions, additionalParameters: { resource: found.resource } },
        );
        return tokens(
          await oauth.processAuthorizationCodeResponse(found.server, asClient(client), response),
          found.server,
        );
      }, "the code exchange failed");
    },

    refresh(refreshToken, issuer) {
      return withServer(async (found, client) => {
        sameIssuer(found, issuer);
        const response = await oauth.refreshTokenGrantRequest(
          found.server,
          asClient(client),
          clientAuth(client),
          refreshToken,
          { ...requestOptions, additionalParameters: { resource: found.resource } },
        );
        return tokens(
          await oauth.processRefreshTokenResponse(found.server, asClient(client), response),
          found.server,
        );
      }, "the refresh failed");
    },

    revoke(token, hint, issuer) {
      return withServer(async (found, client) => {
        sameIssuer(found, issuer);
        if (!found.server.revocation_endpoint) return false;
        const response = await oauth.revocationRequest(
          found.server,
          asClient(client),
          clientAuth(client),
          token,
          { ...requestOptions, additionalParameters: { token_type_hint: hint } },
        );
        await oauth.processRevocationResponse(response);
        return true;
      }, "the revocation failed");
    },
  };
}
