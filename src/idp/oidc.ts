/**
 * OpenID Connect login through oauth4webapi: discovery, the code flow with PKCE, nonce and
 * state, and ID-token validation. Serves `oidc`, `google` (accounts.google.com) and `azure`
 * (an Entra tenant's v2.0 issuer).
 */
import * as oauth from "oauth4webapi";
import type { IdpConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import type { Identity } from "../core/identity.ts";
import { isLoopbackHttp } from "../core/loopback.ts";
import { withTimeout } from "../core/timeout_signal.ts";
import {
  type IdentityProvider,
  IDP_TIMEOUT_MS,
  IdpError,
  type LoginFinish,
  type LoginStart,
} from "./provider.ts";

/** Discovery is cached this long, then fetched again (keys and endpoints may rotate). */
export const DISCOVERY_TTL_MS = 60 * 60_000;

/** A provider for one configuration; it keeps its own discovery, for DISCOVERY_TTL_MS of `clock`. */
export function createOidcProvider(config: IdpConfig, clock: Clock): IdentityProvider {
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
    async completeLogin(finish: LoginFinish): Promise<Identity> {
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
        return {
          subject: `${config.provider}:${claims.sub}`,
          email,
          emailVerified: typeof claims.email_verified === "boolean"
            ? claims.email_verified
            : undefined,
          name: typeof claims.name === "string" ? claims.name : undefined,
        };
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
