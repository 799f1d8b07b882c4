/**
 * Gatehouse as an OAuth client of a service (Linear, GitHub, …) on a person's behalf, through
 * oauth4webapi: the authorization URL with PKCE and state, the code exchange, refresh, and
 * RFC 7009 revocation. Endpoints come from the service's metadata (RFC 8414, else OIDC
 * discovery) or from the configured URLs.
 */
import { GatehouseError } from "../core/errors.ts";
import * as oauth from "oauth4webapi";
import type { OAuthUserToken, TokenAuthMethod } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import { isLoopbackHttp } from "../core/loopback.ts";
import { withTimeout } from "../core/timeout_signal.ts";

/** Calls to a service's OAuth server give up after this long. */
export const SERVICE_TIMEOUT_MS = 10_000;
/** Discovered metadata is reused this long. */
export const DISCOVERY_TTL_MS = 60 * 60_000;

export interface ServiceTokens {
  accessToken: string;
  refreshToken?: string;
  /** Epoch ms, when the service gave `expires_in`. */
  expiresAt?: number;
  scope?: string;
  /** The authorization server that issued them (kind: mcp, whose server is discovered). */
  issuer?: string;
}

/** Where to send the person, and what the connection asks of whom. */
export interface AuthorizationStart {
  url: URL;
  /** The authorization server the URL leads to, when it is discovered (kind: mcp). */
  issuer?: string;
  /** The scopes asked for (space-separated), which a token answer without `scope` was granted. */
  scope?: string;
}

/**
 * `refused`: the service answered with an OAuth error (the grant is gone: reconnect);
 * `unreachable`: no answer, try again later; `invalid_response`: an answer we cannot accept.
 */
export class ServiceOAuthError
  extends GatehouseError<"refused" | "unreachable" | "invalid_response"> {}

export interface ServiceOAuthClient {
  authorizationUrl(start: {
    state: string;
    codeChallenge: string;
    redirectUri: string;
    /** Scopes to ask for instead of the configured ones (a step-up, kind: mcp). */
    scopes?: string[];
  }): Promise<AuthorizationStart>;
  /**
   * Checks the callback (state, error, issuer) and exchanges its code. `issuer`: the
   * authorization server the connection began at; a code is never sent to another.
   */
  exchange(finish: {
    callbackUrl: URL;
    state: string;
    codeVerifier: string;
    redirectUri: string;
    issuer?: string;
  }): Promise<ServiceTokens>;
  /** `issuer`: the one that issued the token, which is never sent to another (refused). */
  refresh(refreshToken: string, issuer?: string): Promise<ServiceTokens>;
  /** Revokes a token at the service; false when the service offers no revocation. */
  revoke(token: string, hint: "access_token" | "refresh_token", issuer?: string): Promise<boolean>;
}

/**
 * A client for one service; token lifetimes (`expiresAt`) and the metadata cache count on
 * `clock`, and so do the time limits of calls to the service.
 */
export function createServiceOAuthClient(
  config: OAuthUserToken,
  clock: Clock,
): ServiceOAuthClient {
  const client: oauth.Client = { client_id: config.clientId };
  const anyUrl = new URL(config.issuer ?? config.authorizationUrl!);
  // Plain http only for a service on this machine (tests, local development).
  const insecure = isLoopbackHttp(anyUrl);
  /** A call to the service, answer read included, given up after SERVICE_TIMEOUT_MS. */
  const bounded = <T>(
    work: (options: { [oauth.allowInsecureRequests]: boolean; signal: AbortSignal }) => Promise<T>,
  ) =>
    withTimeout(
      clock,
      SERVICE_TIMEOUT_MS,
      (signal) => work({ [oauth.allowInsecureRequests]: insecure, signal }),
    );
  let discovered: { server: oauth.AuthorizationServer; at: number } | undefined;

  async function server(): Promise<oauth.AuthorizationServer> {
    if (!config.issuer) {
      return {
        issuer: new URL(config.authorizationUrl!).origin,
        authorization_endpoint: config.authorizationUrl,
        token_endpoint: config.tokenUrl,
        revocation_endpoint: config.revocationUrl,
      };
    }
    if (discovered && clock.now() - discovered.at < DISCOVERY_TTL_MS) return discovered.server;
    const issuer = new URL(config.issuer);
    let lastError: unknown;
    for (const algorithm of ["oauth2", "oidc"] as const) {
      try {
        const metadata = await bounded(async (options) =>
          await oauth.processDiscoveryResponse(
            issuer,
            await oauth.discoveryRequest(issuer, { algorithm, ...options }),
          )
        );
        const merged = {
          ...metadata,
          revocation_endpoint: config.revocationUrl ?? metadata.revocation_endpoint,
        };
        discovered = { server: merged, at: clock.now() };
        return merged;
      } catch (error) {
        lastError = error;
      }
    }
    throw new ServiceOAuthError(
      "unreachable",
      `the OAuth metadata of ${issuer.href} could not be read: ${(lastError as Error).message}`,
    );
  }

  function clientAuth(as: oauth.AuthorizationServer): oauth.ClientAuth {
    const method = config.tokenAuthMethod ?? chooseAuthMethod(config, as);
    const secret = config.clientSecret?.reveal() ?? "";
    if (method === "client_secret_basic") return oauth.ClientSecretBasic(secret);
    if (method === "client_secret_post") return oauth.ClientSecretPost(secret);
    return oauth.None();
  }

  function tokens(result: oauth.TokenEndpointResponse): ServiceTokens {
    return {
      accessToken: result.access_token,
      refreshToken: result.refresh_token,
      expiresAt: expiresAtFrom(result.expires_in, clock.now()),
      scope: result.scope,
    };
  }

  return {
    async authorizationUrl(start) {
      const as = await server();
      if (!as.authorization_endpoint) {
        throw new ServiceOAuthError(
          "invalid_response",
          "the service has no authorization endpoint",
        );
      }
      const url = new URL(as.authorization_endpoint);
      url.searchParams.set("client_id", config.clientId);
      url.searchParams.set("redirect_uri", start.redirectUri);
      url.searchParams.set("response_type", "code");
      if (config.scopes.length) url.searchParams.set("scope", config.scopes.join(" "));
      url.searchParams.set("state", start.state);
      url.searchParams.set("code_challenge", start.codeChallenge);
      url.searchParams.set("code_challenge_method", "S256");
      return { url, scope: config.scopes.length ? config.scopes.join(" ") : undefined };
    },

    async exchange(finish) {
      const as = await server();
      let params: URLSearchParams;
      try {
        params = oauth.validateAuthResponse(as, client, finish.callbackUrl, finish.state);
      } catch (error) {
        throw asServiceError(error, "the service refused the connection");
      }
      return await call(
        () =>
          bounded(async (options) => {
            const response = await oauth.authorizationCodeGrantRequest(
              as,
              client,
              clientAuth(as),
              params,
              finish.redirectUri,
              finish.codeVerifier,
              options,
            );
            return tokens(await oauth.processAuthorizationCodeResponse(as, client, response));
          }),
        "the code exchange failed",
      );
    },

    async refresh(refreshToken) {
      const as = await server();
      return await call(
        () =>
          bounded(async (options) => {
            const response = await oauth.refreshTokenGrantRequest(
              as,
              client,
              clientAuth(as),
              refreshToken,
              options,
            );
            return tokens(await oauth.processRefreshTokenResponse(as, client, response));
          }),
        "the refresh failed",
      );
    },

    async revoke(token, hint) {
      const as = await server();
      if (!as.revocation_endpoint) return false;
      return await call(
        () =>
          bounded(async (options) => {
            const response = await oauth.revocationRequest(as, client, clientAuth(as), token, {
              ...options,
              additionalParameters: { token_type_hint: hint },
            });
            await oauth.processRevocationResponse(response);
            return true;
          }),
        "the revocation failed",
      );
    },
  };
}

/**
 * When a token given `expiresIn` seconds at `now` expires; undefined when not said, or when the
 * number is too large to be a time (it would be stored as null and read as long expired).
 */
export function expiresAtFrom(expiresIn: number | undefined, now: number): number | undefined {
  if (typeof expiresIn !== "number") return undefined;
  const at = now + expiresIn * 1000;
  return Number.isFinite(at) ? at : undefined;
}

/** Secretless clients use none; else basic when the service lists it (RFC 6749's default), else post. */
function chooseAuthMethod(config: OAuthUserToken, as: oauth.AuthorizationServer): TokenAuthMethod {
  if (!config.clientSecret) return "none";
  const supported = as.token_endpoint_auth_methods_supported;
  if (supported?.includes("client_secret_basic")) return "client_secret_basic";
  return "client_secret_post";
}

async function call<T>(work: () => Promise<T>, what: string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asServiceError(error, what);
  }
}

/** Any failure of a call to an OAuth server, as the ServiceOAuthError it amounts to. */
export function asServiceError(error: unknown, what: string): ServiceOAuthError {
  if (error instanceof ServiceOAuthError) return error;
  if (
    error instanceof oauth.ResponseBodyError || error instanceof oauth.AuthorizationResponseError
  ) {
    const detail = error.error_description
      ? `${error.error}: ${error.error_description}`
      : error.error;
    return new ServiceOAuthError("refused", `${what}: ${detail}`);
  }
  const cause = error as Error;
  if (cause.name === "TimeoutError" || cause instanceof TypeError) {
    return new ServiceOAuthError(
      "unreachable",
      `${what}: the service did not answer (${cause.message})`,
    );
  }
  return new ServiceOAuthError("invalid_response", `${what}: ${cause.message}`);
}
