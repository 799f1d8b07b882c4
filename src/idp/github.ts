/**
 * GitHub login (OAuth apps and GitHub Apps' user authorization): the web flow with PKCE, then
 * `/user`, `/user/emails` and `/user/orgs` to learn who logged in. GitHub is not OpenID Connect,
 * so there is no ID token; the identity is what its API says with the fresh access token.
 */
import type { IdpConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import type { Identity } from "../core/identity.ts";
import { withTimeout } from "../core/timeout_signal.ts";
import {
  type IdentityProvider,
  IDP_TIMEOUT_MS,
  IdpError,
  type LoginFinish,
  type LoginStart,
} from "./provider.ts";

const API_HEADERS = {
  accept: "application/vnd.github+json",
  "x-github-api-version": "2022-11-28",
  "user-agent": "gatehouse",
};

async function getJson<T>(url: string, token: string, clock: Clock): Promise<T> {
  return await withTimeout(clock, IDP_TIMEOUT_MS, async (signal) => {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { ...API_HEADERS, authorization: `Bearer ${token}` },
        signal,
      });
    } catch (error) {
      throw new IdpError("unreachable", `GitHub could not be reached: ${(error as Error).message}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new IdpError(
        "invalid_response",
        `GitHub answered ${response.status} for ${new URL(url).pathname}`,
      );
    }
    return await response.json() as T;
  });
}

export function createGithubProvider(config: IdpConfig, clock: Clock): IdentityProvider {
  const web = config.githubUrl;
  const api = config.githubApiUrl;
  return {
    kind: "github",
    authorizationUrl(start: LoginStart): Promise<URL> {
      const url = new URL(`${web}/login/oauth/authorize`);
      url.searchParams.set("client_id", config.clientId);
      url.searchParams.set("redirect_uri", start.redirectUri);
      url.searchParams.set("scope", config.scopes.join(" "));
      url.searchParams.set("state", start.state);
      url.searchParams.set("code_challenge", start.codeChallenge);
      url.searchParams.set("code_challenge_method", "S256");
      url.searchParams.set("allow_signup", "false");
      return Promise.resolve(url);
    },
    async completeLogin(finish: LoginFinish): Promise<Identity> {
      const params = finish.callbackUrl.searchParams;
      if (params.get("error")) {
        throw new IdpError(
          params.get("error") === "access_denied" ? "login_refused" : "provider_error",
          `GitHub refused the login: ${params.get("error_description") ?? params.get("error")}`,
        );
      }
      if (params.get("state") !== finish.state || !params.get("code")) {
        throw new IdpError("invalid_response", "GitHub's answer lacks the expected state or code");
      }
      let token: { access_token?: string; error?: string; error_description?: string };
      try {
        token = await withTimeout(clock, IDP_TIMEOUT_MS, async (signal) => {
          const response = await fetch(`${web}/login/oauth/access_token`, {
            method: "POST",
            headers: { accept: "application/json", "user-agent": "gatehouse" },
            body: new URLSearchParams({
              client_id: config.clientId,
              client_secret: config.clientSecret.reveal(),
              code: params.get("code")!,
              redirect_uri: finish.redirectUri,
              code_verifier: finish.codeVerifier,
            }),
            signal,
          });
          return await response.json();
        });
      } catch (error) {
        throw new IdpError(
          "unreachable",
          `GitHub's token endpoint failed: ${(error as Error).message}`,
        );
      }
      // GitHub reports exchange errors with 200 and an `error` field.
      if (!token.access_token) {
        throw new IdpError(
          "provider_error",
          `GitHub refused the code: ${token.error_description ?? token.error ?? "no access token"}`,
        );
      }
      const accessToken = token.access_token;
      const [user, emails, orgs] = await Promise.all([
        getJson<{ id: number; login: string; name?: string | null }>(
          `${api}/user`,
          accessToken,
          clock,
        ),
        getJson<{ email: string; primary: boolean; verified: boolean }[]>(
          `${api}/user/emails`,
          accessToken,
          clock,
        ),
        getJson<{ login: string }[]>(`${api}/user/orgs`, accessToken, clock),
      ]);
      if (typeof user?.id !== "number") {
        throw new IdpError("invalid_response", "GitHub's /user answer has no id");
      }
      const verified = (Array.isArray(emails) ? emails : []).filter((e) => e.verified);
      const primary = verified.find((e) => e.primary) ?? verified[0];
      return {
        subject: `github:${user.id}`,
        email: primary?.email,
        emailVerified: primary ? true : undefined,
        name: user.name ?? user.login,
        orgs: (Array.isArray(orgs) ? orgs : []).map((org) => org.login.toLowerCase()),
        verifiedEmails: verified.map((e) => e.email),
      };
    },
  };
}
