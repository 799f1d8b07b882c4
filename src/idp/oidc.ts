/**
 * OpenID Connect login through oauth4webapi: discovery, the code flow with PKCE, nonce and
 * state, and ID-token validation. Serves `oidc`, `google` (accounts.google.com) and `azure`
 * (an Entra tenant's v2.0 issuer). With `groupsClaim`, the person's groups come from that claim
 * of the ID token, or of userinfo when the ID token lacks it.
 */
import * as oauth from "oauth4webapi";
import type { IdpConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import type { Identity } from "../core/identity.ts";
import { accessTokenLive, type IdpTokens } from "../core/idp_tokens.ts";
import { isLoopbackHttp } from "../core/loopback.ts";
import { withTimeout } from "../core/timeout_signal.ts";
import { boundGroups, readGroupsClaim } from "./groups.ts";
import { exchangeAtProvider, providerWords } from "./token_exchange.ts";
import {
  type ExchangedToken,
  type ExchangeRequest,
  type IdentityProvider,
  IDP_TIMEOUT_MS,
  IdpError,
  type IdpLog,
  type LoginFinish,
  type LoginStart,
  type Renewal,
  type SignedIn,
} from "./provider.ts";

/** Discovery is cached this long, then fetched again (keys and endpoints may rotate). */
export const DISCOVERY_TTL_MS = 60 * 60_000;

/**
 * Entra ID sends a pointer to Microsoft Graph in place of a long groups list (the "overage").
 * `_claim_names` names the claims so replaced; `hasgroups` is the implicit flow's form of it.
 */
function isOverage(claims: oauth.IDToken, claim: string): boolean {
  const names = claims._claim_names;
  const replaced = typeof names === "object" && names !== null && !Array.isArray(names) &&
    names[claim] !== undefined;
  return replaced || (claim === "groups" && claims.hasgroups === true);
}

/** A provider for one configuration; it keeps its own discovery, for DISCOVERY_TTL_MS of `clock`. */
export function createOidcProvider(
  config: IdpConfig,
  clock: Clock,
  log: IdpLog,
): IdentityProvider {
  const issuer = new URL(config.issuer!);
  const client: oauth.Client = { client_id: config.clientId };
  const clientAuth = oauth.ClientSecretPost(config.clientSecret.reveal());
  // Plain http is only ever allowed for an issuer on this machine (tests, local development).
  const insecure = isLoopbackHttp(issuer);
  /** A call to the provider, answer read included, given up after IDP_TIMEOUT_MS. */
  const bounded = <T>(
    work: (options: { [oauth.allowInsecureRequests]: boolean; signal: AbortSignal }) => Promise<T>,
  ) =>
    withTimeout(
      clock,
      IDP_TIMEOUT_MS,
      (signal) => work({ [oauth.allowInsecureRequests]: insecure, signal }),
    );
  let discovered: { server: oauth.AuthorizationServer; at: number } | undefined;

  async function server(): Promise<oauth.AuthorizationServer> {
    if (discovered && clock.now() - discovered.at < DISCOVERY_TTL_MS) return discovered.server;
    try {
      const result = await bounded(async (options) =>
        await oauth.processDiscoveryResponse(
          issuer,
          await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...options }),
        )
      );
      discovered = { server: result, at: clock.now() };
      return result;
    } catch (error) {
      throw new IdpError(
        "unreachable",
        `the identity provider at ${issuer.href} could not be discovered: ${
          (error as Error).message
        }`,
      );
    }
  }

  /**
   * The person's groups: `claim` of the ID token, else of userinfo; never Microsoft Graph.
   * With an ID token, a claim absent from both means no groups, at a sign-in and at a renewal
   * alike (Okta and Entra ID leave the claim out once the person is in no group: read as
   * "unknown", a person taken out of their last group would keep it). Without one (a refresh
   * that sent none) only userinfo, which must then carry the claim (`renewing`): its absence
   * says nothing of the groups, and they stay as last read.
   */
  async function groupsOf(
    as: oauth.AuthorizationServer,
    sub: string,
    claims: oauth.IDToken | undefined,
    accessToken: string,
    claim: string,
    renewing = false,
  ): Promise<string[]> {
    const subject = `${config.provider}:${sub}`;
    const inToken = claims && readGroupsClaim(claims[claim], claim, subject, log);
    if (inToken) return boundGroups(inToken, subject, log);
    if (claims && isOverage(claims, claim)) {
      log.warn(
        "the identity provider sent a group overage instead of the groups; sign-in proceeds without groups",
        {
          subject,
          claim,
          hint:
            'in Entra ID, emit "Groups assigned to the application" in the token configuration, or use app roles with groupsClaim: roles; the gateway does not call Microsoft Graph',
        },
      );
      return [];
    }
    const unknowable = renewing && claims === undefined;
    if (!as.userinfo_endpoint) {
      if (unknowable) {
        throw new IdpError("provider_error", "the identity provider has no userinfo");
      }
      return [];
    }
    const info = await userinfo(
      as,
      sub,
      accessToken,
      `the identity provider's userinfo answer (asked for the ${claim} claim)`,
    );
    const named = readGroupsClaim(info[claim], claim, subject, log);
    if (named === undefined && unknowable) {
      throw new IdpError(
        "provider_error",
        `the identity provider's userinfo has no ${claim} claim and the refresh sent no ID token`,
      );
    }
    return boundGroups(named ?? [], subject, log);
  }

  /** The userinfo answer for the person `sub` names, read with `accessToken`. */
  async function userinfo(
    as: oauth.AuthorizationServer,
    sub: string,
    accessToken: string,
    /** What the answer was for, as an error names it. */
    what: string,
  ): Promise<oauth.UserInfoResponse> {
    try {
      return await bounded(async (options) =>
        await oauth.processUserInfoResponse(
          as,
          client,
          sub,
          await oauth.userInfoRequest(as, client, accessToken, options),
        )
      );
    } catch (error) {
      throw askError(error, what);
    }
  }

  /** New tokens from the refresh token kept; the ID token's claims if it sent one. */
  async function refreshed(
    as: oauth.AuthorizationServer,
    sub: string,
    tokens: IdpTokens & { refreshToken: string },
  ): Promise<{ tokens: IdpTokens; claims?: oauth.IDToken }> {
    let result: oauth.TokenEndpointResponse;
    try {
      result = await bounded(async (options) =>
        await oauth.processRefreshTokenResponse(
          as,
          client,
          await oauth.refreshTokenGrantRequest(
            as,
            client,
            clientAuth,
            tokens.refreshToken,
            options,
          ),
        )
      );
    } catch (error) {
      throw askError(error, "the identity provider's answer to a refresh");
    }
    const claims = oauth.getValidatedIdTokenClaims(result);
    if (claims && claims.sub !== sub) {
      throw new IdpError("invalid_response", "the refreshed ID token names another person");
    }
    const next = tokensOf(result, clock.now());
    // A provider that does not rotate sends no new refresh token: the old one stays good.
    next.refreshToken ??= tokens.refreshToken;
    next.idToken ??= tokens.idToken;
    return { tokens: next, claims };
  }

  return {
    kind: config.provider,
    async exchange(accessToken: string, request: ExchangeRequest): Promise<ExchangedToken> {
      return await exchangeAtProvider(
        await server(),
        client,
        clientAuth,
        bounded,
        accessToken,
        request,
      );
    },
    async renew(subject: string, tokens: IdpTokens): Promise<Renewal> {
      const as = await server();
      const sub = subject.slice(config.provider.length + 1);
      let current = tokens;
      let claims: oauth.IDToken | undefined;
      if (tokens.refreshToken !== undefined) {
        ({ tokens: current, claims } = await refreshed(as, sub, {
          ...tokens,
          refreshToken: tokens.refreshToken,
        }));
      } else if (!accessTokenLive(tokens, clock.now())) {
        throw new IdpError(
          "provider_error",
          "the identity provider issued no refresh token at sign-in and its access token has expired",
        );
      }
      if (config.groupsClaim !== undefined) {
        const groups = await groupsOf(
          as,
          sub,
          claims,
          current.accessToken,
          config.groupsClaim,
          true,
        );
        return { groups, tokens: current };
      }
      // No groups to read; a refresh already proved the provider still knows the person.
      if (tokens.refreshToken === undefined && as.userinfo_endpoint) {
        await userinfo(
          as,
          sub,
          current.accessToken,
          "the identity provider's userinfo answer (asked whether the person is still known)",
        );
      }
      return { tokens: current };
    },
    async authorizationUrl(start: LoginStart): Promise<URL> {
      const as = await server();
      if (!as.authorization_endpoint) {
        throw new IdpError(
          "invalid_response",
          "the identity provider has no authorization endpoint",
        );
      }
      const url = new URL(as.authorization_endpoint);
      url.searchParams.set("client_id", config.clientId);
      url.searchParams.set("redirect_uri", start.redirectUri);
      url.searchParams.set("response_type", "code");
      url.searchParams.set("scope", scopesFor(as, config).join(" "));
      // Google hands out a refresh token for this instead of the offline_access scope.
      if (config.provider === "google") url.searchParams.set("access_type", "offline");
      url.searchParams.set("state", start.state);
      url.searchParams.set("nonce", start.nonce);
      url.searchParams.set("code_challenge", start.codeChallenge);
      url.searchParams.set("code_challenge_method", "S256");
      return url;
    },
    async completeLogin(finish: LoginFinish): Promise<SignedIn> {
      const as = await server();
      let params: URLSearchParams;
      try {
        params = oauth.validateAuthResponse(as, client, finish.callbackUrl, finish.state);
      } catch (error) {
        const cause = error as { error?: string; error_description?: string; message: string };
        throw new IdpError(
          cause.error === "access_denied" ? "login_refused" : "provider_error",
          `the identity provider refused the login: ${
            cause.error_description ?? cause.error ?? cause.message
          }`,
        );
      }
      try {
        const result = await bounded(async (options) =>
          await oauth.processAuthorizationCodeResponse(
            as,
            client,
            await oauth.authorizationCodeGrantRequest(
              as,
              client,
              clientAuth,
              params,
              finish.redirectUri,
              finish.codeVerifier,
              options,
            ),
            { expectedNonce: finish.nonce, requireIdToken: true },
          )
        );
        const claims = oauth.getValidatedIdTokenClaims(result)!;
        const email = typeof claims.email === "string"
          ? claims.email
          : config.provider === "azure" && typeof claims.preferred_username === "string"
          ? claims.preferred_username
          : undefined;
        const identity: Identity = {
          subject: `${config.provider}:${claims.sub}`,
          email,
          emailVerified: typeof claims.email_verified === "boolean"
            ? claims.email_verified
            : undefined,
          name: typeof claims.name === "string" ? claims.name : undefined,
          ...(config.groupsClaim !== undefined && {
            groups: await groupsOf(as, claims.sub, claims, result.access_token, config.groupsClaim),
          }),
        };
        return { identity, tokens: tokensOf(result, clock.now()) };
      } catch (error) {
        if (error instanceof IdpError) throw error;
        throw new IdpError(
          "invalid_response",
          `the identity provider's answer could not be accepted: ${(error as Error).message}`,
        );
      }
    },
  };
}

/** What the gateway keeps of a token endpoint's answer (sealed, credentials/idp_token_vault.ts). */
export function tokensOf(result: oauth.TokenEndpointResponse, now: number): IdpTokens {
  return {
    accessToken: result.access_token,
    ...(typeof result.expires_in === "number" && {
      accessExpiresAt: now + result.expires_in * 1000,
    }),
    ...(result.refresh_token !== undefined && { refreshToken: result.refresh_token }),
    ...(result.id_token !== undefined && { idToken: result.id_token }),
    ...(result.scope !== undefined && { scope: result.scope }),
    obtainedAt: now,
  };
}

/**
 * The scopes asked for at sign-in: the configured ones, with `offline_access` where the provider
 * offers it, so that a refresh token lets the gateway ask about the person again later.
 */
export function scopesFor(as: oauth.AuthorizationServer, config: IdpConfig): string[] {
  const offered = as.scopes_supported?.includes("offline_access") ?? false;
  return offered && !config.scopes.includes("offline_access")
    ? [...config.scopes, "offline_access"]
    : config.scopes;
}

/**
 * A failed call to the provider as an `IdpError`: "revoked" when the provider refused the
 * person's tokens (invalid_grant, 401), "unreachable" when it could not be reached, else
 * "provider_error".
 */
export function askError(error: unknown, what: string): IdpError {
  if (error instanceof IdpError) return error;
  const message = (error as Error).message;
  if (error instanceof oauth.ResponseBodyError) {
    return new IdpError(
      error.error === "invalid_grant" ? "revoked" : "provider_error",
      `${what} was a refusal: ${providerWords(error.error)}${
        error.error_description ? ` (${providerWords(error.error_description)})` : ""
      }`,
    );
  }
  const status = error instanceof oauth.WWWAuthenticateChallengeError
    ? error.status
    : error instanceof oauth.OperationProcessingError && error.cause instanceof Response
    ? error.cause.status
    : undefined;
  if (status === 401) return new IdpError("revoked", `${what} was 401: the token is not accepted`);
  if (status !== undefined) {
    return new IdpError("provider_error", `${what} could not be accepted: ${message}`);
  }
  if (error instanceof oauth.OperationProcessingError) {
    return new IdpError("invalid_response", `${what} could not be accepted: ${message}`);
  }
  return new IdpError("unreachable", `${what} did not come: ${message}`);
}
