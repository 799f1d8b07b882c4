/**
 * POST /token (RFC 6749 §3.2, OAuth 2.1 §4.1.3 and §4.3): the authorization_code and
 * refresh_token grants as a list of named checks, in the order the RFCs give them. Takes the
 * parsed form and returns the response body or throws an `OAuthError`.
 */
import type { Identity } from "../core/identity.ts";
import { verifyS256 } from "../crypto/pkce.ts";
import type { AccessTokens } from "./access_tokens.ts";
import type { ClientDirectory } from "./client_directory.ts";
import type { ClientRecord } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import { authenticateClient, required } from "./client_authentication.ts";
import type { CodeRecord, GrantContext, GrantStore } from "./grants.ts";
import { type JwtBearerDeps, jwtBearerGrant } from "./jwt_bearer.ts";
import { JWT_BEARER } from "./metadata.ts";

export interface TokenDeps {
  clients: ClientDirectory;
  grants: GrantStore;
  accessTokens: AccessTokens;
  /** Re-checks the access policy: undefined when the person may still get tokens. */
  checkAccess(identity: Identity): string | undefined;
  /**
   * Checks the servers' own `access:` for the audience about to be issued, as the configuration
   * says now: undefined when the person may use every one, else why not.
   */
  checkServerAccess(identity: Identity, audience: string[]): string | undefined;
  /** Resolves a `resource` value to a service URI, or undefined when it names no service. */
  resolveResource(resource: string): string | undefined;
  /**
   * The groups the configuration names anywhere: an access token carries only these of the
   * person's groups, asked afresh at each issue so a refresh after a reload sees new names.
   */
  namedGroups(): ReadonlySet<string>;
  /**
   * The person as they are now: `identity` while its groups are recent (`oauth.groupsMaxAge`),
   * else as the identity provider states them; not ok when the provider no longer accepts the
   * person. Left out: the identity as kept.
   */
  currentIdentity?(identity: Identity): Promise<CurrentIdentity>;
  /** The jwt-bearer grant for ID-JAGs; absent unless `oauth.idJag` is configured. */
  jwtBearer?: JwtBearerDeps;
}

/** The person as the identity provider states them now, or why their grant ends. */
export type CurrentIdentity = { ok: true; identity: Identity } | { ok: false; reason: string };

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  scope: string;
  refresh_token?: string;
}

/** `resource` on a token request may narrow the audience, never widen it (RFC 8707 §2.2). */
function narrowAudience(form: URLSearchParams, granted: string[], deps: TokenDeps): string[] {
  const requested = form.getAll("resource");
  if (requested.length === 0) return granted;
  const audience = requested.map((resource) => {
    const uri = deps.resolveResource(resource);
    if (!uri || !granted.includes(uri)) {
      throw new OAuthError(
        "invalid_target",
        `the resource ${resource.slice(0, 200)} was not granted to this authorization`,
      );
    }
    return uri;
  });
  return [...new Set(audience)];
}

async function respond(
  deps: TokenDeps,
  client: ClientRecord,
  familyId: string,
  context: GrantContext,
  audience: string[],
  refreshToken: string | undefined,
): Promise<TokenResponse> {
  const named = deps.namedGroups();
  const accessToken = await deps.accessTokens.issue({
    subject: context.identity.subject,
    // An address the provider calls unverified proves nothing: rules on MCP requests (a
    // server's access, tool rules) and backends ({{user.email}}) must not take it as the person's.
    email: context.identity.emailVerified === false ? undefined : context.identity.email,
    clientId: client.clientId,
    audience,
    scope: context.scope,
    familyId,
    groups: (context.identity.groups ?? []).filter((group) => named.has(group)),
  });
  await deps.clients.markUsed(client);
  return {
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: deps.accessTokens.ttlSeconds,
    scope: context.scope,
    ...(refreshToken !== undefined && { refresh_token: refreshToken }),
  };
}

/**
 * The servers' `access:` as configured now (a reload may have narrowed it since the person
 * consented): a grant whose audience the person may no longer use is ended, like one whose
 * person the access policy no longer admits.
 */
async function checkServers(
  deps: TokenDeps,
  familyId: string,
  context: GrantContext,
  audience: string[],
): Promise<void> {
  const refusal = deps.checkServerAccess(context.identity, audience);
  if (!refusal) return;
  await deps.grants.revokeFamily(familyId);
  throw new OAuthError("invalid_grant", `access was withdrawn: ${refusal}`);
}

function codeReplayed(): OAuthError {
  return new OAuthError(
    "invalid_grant",
    "the authorization code was already used; the tokens issued for it are revoked",
  );
}

/** The code's own checks (RFC 6749 §4.1.3, RFC 7636 §4.6); the refusal, or undefined. */
async function codeProblem(
  record: CodeRecord,
  client: ClientRecord,
  redirectUri: string,
  verifier: string,
): Promise<OAuthError | undefined> {
  if (record.clientId !== client.clientId) {
    return new OAuthError("invalid_grant", "the authorization code was issued to another client");
  }
  if (record.redirectUri !== redirectUri) {
    return new OAuthError(
      "invalid_grant",
      "redirect_uri differs from the one in the authorization request",
    );
  }
  if (!(await verifyS256(verifier, record.codeChallenge))) {
    return new OAuthError(
      "invalid_grant",
      "the code_verifier does not match the code_challenge",
    );
  }
  return undefined;
}

async function authorizationCodeGrant(
  form: URLSearchParams,
  client: ClientRecord,
  deps: TokenDeps,
  admit: Admit,
): Promise<TokenResponse> {
  const code = required(form, "code");
  const redirectUri = required(form, "redirect_uri");
  const verifier = required(form, "code_verifier");
  if (client.tokenEndpointAuthMethod === "none") {
    // The code and its verifier are what prove a public client; checked here on a look that
    // uses nothing up, so a client over its limit keeps its code. A request that does not
    // prove itself is not charged to the client: it fails below, with the code used up.
    const pending = await deps.grants.peekCode(code);
    if (pending && !(await codeProblem(pending, client, redirectUri, verifier))) {
      await admit(client);
    }
  }
  const redemption = await deps.grants.redeemCode(code);
  if (!redemption.ok) {
    if (redemption.reason === "replayed") throw codeReplayed();
    throw new OAuthError(
      "invalid_grant",
      redemption.reason === "expired"
        ? "the authorization code has expired; start the authorization again"
        : "the authorization code is not valid",
    );
  }
  const { record, familyId } = redemption;
  const problem = await codeProblem(record, client, redirectUri, verifier);
  if (problem) {
    await deps.grants.revokeFamily(familyId);
    throw problem;
  }
  const audience = narrowAudience(form, record.audience, deps);
  await checkServers(deps, familyId, record, audience);
  let refreshToken: string | undefined;
  if (client.grantTypes.includes("refresh_token")) {
    refreshToken = await deps.grants.issueRefresh(familyId, record);
    if (refreshToken === undefined) throw codeReplayed();
  }
  return await respond(deps, client, familyId, record, audience, refreshToken);
}

async function refreshTokenGrant(
  form: URLSearchParams,
  client: ClientRecord,
  deps: TokenDeps,
  admit: Admit,
): Promise<TokenResponse> {
  if (!client.grantTypes.includes("refresh_token")) {
    throw new OAuthError(
      "unauthorized_client",
      "this client did not register the refresh_token grant",
    );
  }
  const token = required(form, "refresh_token");
  const peek = await deps.grants.peekRefresh(token);
  if (!peek.ok) {
    throw new OAuthError(
      "invalid_grant",
      peek.reason === "replayed"
        ? "the refresh token was already used or revoked; every token of this grant is revoked"
        : peek.reason === "expired"
        ? "the refresh token has expired; authorize again"
        : "the refresh token is not valid",
    );
  }
  const { record, familyId } = peek;
  if (record.clientId !== client.clientId) {
    throw new OAuthError("invalid_grant", "the refresh token was issued to another client");
  }
  if (client.tokenEndpointAuthMethod === "none") await admit(client);
  const current = await deps.currentIdentity?.(record.identity) ??
    { ok: true, identity: record.identity };
  if (!current.ok) {
    await deps.grants.revokeFamily(familyId);
    throw new OAuthError("invalid_grant", current.reason);
  }
  // The groups as read now travel on: into the family (each request is judged by them), the
  // next refresh token and the access token.
  const context = { ...record, identity: current.identity };
  const refusal = deps.checkAccess(context.identity);
  if (refusal) {
    await deps.grants.revokeFamily(familyId);
    throw new OAuthError("invalid_grant", `access was withdrawn: ${refusal}`);
  }
  const audience = narrowAudience(form, record.audience, deps);
  await checkServers(deps, familyId, context, audience);
  const rotation = await deps.grants.rotateRefresh(token, context);
  if (!rotation.ok) {
    throw new OAuthError(
      "invalid_grant",
      rotation.reason === "replayed"
        ? "the refresh token was already used; every token of this grant is revoked"
        : "the refresh token was already used or revoked; every token of this grant is revoked",
    );
  }
  return await respond(deps, client, familyId, context, audience, rotation.token);
}

/**
 * Called once a request is proven to come from `client`, before anything is used up: a
 * confidential client by its secret, a public client (whose id anyone can send) by its code and
 * verifier or its refresh token. Throws to refuse the request; the caller's per-client limit.
 */
export type Admit = (client: ClientRecord) => void | Promise<void>;

export async function handleTokenRequest(
  form: URLSearchParams,
  authorization: string | null,
  deps: TokenDeps,
  admit: Admit,
): Promise<TokenResponse> {
  const grantType = required(form, "grant_type");
  const bearer = grantType === JWT_BEARER ? deps.jwtBearer : undefined;
  if (grantType !== "authorization_code" && grantType !== "refresh_token" && !bearer) {
    throw new OAuthError(
      "unsupported_grant_type",
      grantType === JWT_BEARER
        ? "this gateway takes no ID-JAGs (oauth.idJag is not configured)"
        : `grant_type ${grantType.slice(0, 60)} is not supported; use authorization_code${
          deps.jwtBearer ? `, refresh_token or ${JWT_BEARER}` : " or refresh_token"
        }`,
    );
  }
  const client = await authenticateClient(form, authorization, deps.clients);
  if (client.tokenEndpointAuthMethod !== "none") await admit(client);
  if (bearer) {
    const { familyId, context } = await jwtBearerGrant(form, client, bearer, deps);
    return await respond(deps, client, familyId, context, context.audience, undefined);
  }
  return grantType === "authorization_code"
    ? await authorizationCodeGrant(form, client, deps, admit)
    : await refreshTokenGrant(form, client, deps, admit);
}
