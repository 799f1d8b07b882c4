/**
 * GitHub login (OAuth apps and GitHub Apps' user authorization): the web flow with PKCE, then
 * `/user`, `/user/emails`, `/user/orgs` and `/user/teams` to learn who logged in. GitHub is not
 * OpenID Connect, so there is no ID token; the identity is what its API says with the fresh
 * access token. Groups are the organisations (`org`) and teams (`org/team-slug`), lower-cased:
 * GitHub compares logins and slugs without regard to case.
 */
import type { IdpConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import type { Identity } from "../core/identity.ts";
import { accessTokenLive, type IdpTokens } from "../core/idp_tokens.ts";
import { withTimeout } from "../core/timeout_signal.ts";
import { getJson, getList, type GithubList, GithubStatusError } from "./github_api.ts";
import { boundGroups } from "./groups.ts";
import {
  type IdentityProvider,
  IDP_TIMEOUT_MS,
  IdpError,
  type IdpLog,
  type LoginFinish,
  type LoginStart,
  type Renewal,
  type SignedIn,
} from "./provider.ts";

/** GitHub's token endpoint's answer (an error comes with 200 and `error`). */
interface GithubTokenAnswer {
  access_token?: string;
  /** GitHub Apps with expiring user tokens only. */
  expires_in?: number;
  refresh_token?: string;
  scope?: string;
  error?: string;
  error_description?: string;
}

/** A team as GET /user/teams lists it (fields the gateway reads). */
interface GithubTeam {
  slug?: unknown;
  organization?: { login?: unknown } | null;
}

export function createGithubProvider(
  config: IdpConfig,
  clock: Clock,
  log: IdpLog,
): IdentityProvider {
  const web = config.githubUrl;
  const api = config.githubApiUrl;

  /**
   * The person's teams. GitHub answers 403 when the token lacks `read:org` (or a GitHub App
   * the organisation Members permission): then none, and the caller says so.
   */
  async function teamsOf(token: string): Promise<GithubList<GithubTeam> & { refused?: number }> {
    try {
      return await getList<GithubTeam>(api, "/user/teams", token, clock);
    } catch (error) {
      if (!(error instanceof GithubStatusError) || ![403, 404].includes(error.status)) throw error;
      return { items: [], truncated: false, refused: error.status };
    }
  }

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
    async completeLogin(finish: LoginFinish): Promise<SignedIn> {
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
      const token = await tokenRequest({
        code: params.get("code")!,
        redirect_uri: finish.redirectUri,
        code_verifier: finish.codeVerifier,
      });
      // GitHub reports exchange errors with 200 and an `error` field.
      if (!token.access_token) {
        throw new IdpError(
          "provider_error",
          `GitHub refused the code: ${token.error_description ?? token.error ?? "no access token"}`,
        );
      }
      const accessToken = token.access_token;
      const [user, emails, memberships] = await Promise.all([
        getJson<GithubUser>(`${api}/user`, accessToken, clock),
        getJson<{ email: string; primary: boolean; verified: boolean }[]>(
          `${api}/user/emails`,
          accessToken,
          clock,
        ),
        membershipsOf(accessToken),
      ]);
      const subject = subjectOf(user);
      const verified = (Array.isArray(emails) ? emails : []).filter((e) => e.verified);
      const primary = verified.find((e) => e.primary) ?? verified[0];
      const { orgs, groups } = groupsOf(subject, memberships, "sign-in");
      const identity: Identity = {
        subject,
        email: primary?.email,
        emailVerified: primary ? true : undefined,
        name: user.name ?? user.login,
        orgs,
        groups,
        verifiedEmails: verified.map((e) => e.email),
      };
      return { identity, tokens: githubTokens(token, accessToken, clock.now()) };
    },
    async renew(subject: string, tokens: IdpTokens): Promise<Renewal> {
      let current = tokens;
      if (!accessTokenLive(tokens, clock.now())) {
        if (tokens.refreshToken === undefined) {
          throw new IdpError("provider_error", "GitHub's token has expired and none refreshes it");
        }
        // Expiring user tokens of GitHub Apps; GitHub says bad_refresh_token for a dead one.
        const token = await tokenRequest({
          grant_type: "refresh_token",
          refresh_token: tokens.refreshToken,
        });
        if (!token.access_token) {
          throw new IdpError(
            token.error === "bad_refresh_token" ? "revoked" : "provider_error",
            `GitHub refused the refresh: ${token.error ?? "no access token"}`,
          );
        }
        current = githubTokens(token, token.access_token, clock.now());
        current.refreshToken ??= tokens.refreshToken;
      }
      try {
        const [user, memberships] = await Promise.all([
          getJson<GithubUser>(`${api}/user`, current.accessToken, clock),
          membershipsOf(current.accessToken),
        ]);
        if (subjectOf(user) !== subject) {
          throw new IdpError("invalid_response", "GitHub's /user names another person");
        }
        return {
          ...groupsOf(subject, memberships, "renewal"),
          tokens: current,
        };
      } catch (error) {
        // The person revoked the app, or GitHub no longer knows them.
        if (error instanceof GithubStatusError && error.status === 401) {
          throw new IdpError("revoked", "GitHub no longer accepts the person's token (401)");
        }
        throw error;
      }
    },
  };

  /** A POST to GitHub's token endpoint with the app's credentials. */
  async function tokenRequest(fields: Record<string, string>): Promise<GithubTokenAnswer> {
    try {
      return await withTimeout(clock, IDP_TIMEOUT_MS, async (signal) => {
        const response = await fetch(`${web}/login/oauth/access_token`, {
          method: "POST",
          headers: { accept: "application/json", "user-agent": "gatehouse" },
          body: new URLSearchParams({
            client_id: config.clientId,
            client_secret: config.clientSecret.reveal(),
            ...fields,
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
  }

  async function membershipsOf(token: string): Promise<Memberships> {
    const [orgs, teams] = await Promise.all([
      getList<{ login?: unknown }>(api, "/user/orgs", token, clock),
      teamsOf(token),
    ]);
    return { orgs, teams };
  }

  /** Organisations as `org`, teams as `org/team-slug`, lower-cased; warnings for what is missing. */
  function groupsOf(
    subject: string,
    { orgs, teams }: Memberships,
    outcome: "sign-in" | "renewal",
  ): { orgs: string[]; groups: string[] } {
    const orgLogins = orgs.items.flatMap((org) =>
      typeof org?.login === "string" ? [org.login.toLowerCase()] : []
    );
    const teamNames = teams.items.flatMap((team) =>
      typeof team?.slug === "string" && typeof team.organization?.login === "string"
        ? [`${team.organization.login}/${team.slug}`.toLowerCase()]
        : []
    );
    if (teams.refused !== undefined) {
      log.warn(
        outcome === "sign-in"
          ? "GitHub refused to list the person's teams; sign-in proceeds with organisations only"
          : "GitHub refused to list the person's teams; their groups are read again with organisations only",
        {
          subject,
          status: teams.refused,
          hint:
            "ask for the read:org scope (oauth.idp.scopes); a GitHub App needs the organisation permission Members: read",
        },
      );
    }
    if (orgs.truncated || teams.truncated) {
      log.warn(
        "GitHub lists more organisations or teams than the gateway reads; the rest are ignored",
        {
          subject,
          organisations: orgLogins.length,
          teams: teamNames.length,
        },
      );
    }
    return { orgs: orgLogins, groups: boundGroups([...orgLogins, ...teamNames], subject, log) };
  }
}

interface GithubUser {
  id: number;
  login: string;
  name?: string | null;
}

interface Memberships {
  orgs: GithubList<{ login?: unknown }>;
  teams: GithubList<GithubTeam> & { refused?: number };
}

function subjectOf(user: GithubUser | undefined): string {
  if (typeof user?.id !== "number") {
    throw new IdpError("invalid_response", "GitHub's /user answer has no id");
  }
  return `github:${user.id}`;
}

/** What the gateway keeps of GitHub's token answer (sealed, credentials/idp_token_vault.ts). */
function githubTokens(answer: GithubTokenAnswer, accessToken: string, now: number): IdpTokens {
  return {
    accessToken,
    ...(typeof answer.expires_in === "number" && {
      accessExpiresAt: now + answer.expires_in * 1000,
    }),
    ...(typeof answer.refresh_token === "string" && { refreshToken: answer.refresh_token }),
    ...(typeof answer.scope === "string" && { scope: answer.scope }),
    obtainedAt: now,
  };
}
