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
import type { IdpTokens } from "../core/idp_tokens.ts";
import { isLoopbackHttp } from "../core/loopback.ts";
import { withTimeout } from "../core/timeout_signal.ts";
import { boundGroups, readGroupsClaim } from "./groups.ts";
import {
  type IdentityProvider,
  IDP_TIMEOUT_MS,
  IdpError,
  type IdpLog,
  type LoginFinish,
  type LoginStart,
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

  /** The person's groups: `claim` of the ID token, else of userinfo; never Microsoft Graph. */
  async function groupsOf(
    as: oauth.AuthorizationServer,
    claims: oauth.IDToken,
    accessToken: string,
    claim: string,
  ): Promise<string[]> {
    const subject = `${config.provider}:${claims.sub}`;
    const inToken = readGroupsClaim(claims[claim], claim, subject, log);
    if (inToken) return boundGroups(inToken, subject, log);
    if (isOverage(claims, claim)) {
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
    if (!as.userinfo_endpoint) return [];
    let info: oauth.UserInfoResponse;
    try {
      info = await bounded(async (options) =>
        await oauth.processUserInfoResponse(
          as,
          client,
          claims.sub,
          await oauth.userInfoRequest(as, client, accessToken, options),
        )
      );
    } catch (error) {
      throw new IdpError(
        "invalid_response",
        `the identity provider's userinfo answer, asked for the ${claim} claim, could not be accepted: ${
          (error as Error).message
        }`,
      );
    }
    return boundGroups(readGroupsClaim(info[claim], claim, subject, log) ?? [], subject, log);
  }

  return {
    kind: config.provider,
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
      url.searchParams.set("scope", config.scopes.join(" "));
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
            groups: await groupsOf(as, claims, result.access_token, config.groupsClaim),
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
