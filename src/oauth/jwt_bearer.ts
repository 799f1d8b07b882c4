/**
 * The RFC 7523 jwt-bearer grant with an ID-JAG as its assertion (enterprise-managed
 * authorization): a confidential client presents what the company's identity provider issued
 * for one of Gatehouse's services and gets the same access token the code flow gives, with no
 * browser and no refresh token. The assertion's checks are `id_jag.ts`'s list; this module
 * adds what the token endpoint decides: the client, the service, the scope, the person, and the
 * one atomic write that records the `jti` and opens the grant.
 */
import type { Clock } from "../core/clock.ts";
import type { Identity } from "../core/identity.ts";
import { KEYS } from "../store/keys.ts";
import type { ClientRecord } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import type { GrantContext, GrantStore } from "./grants.ts";
import {
  checkIdJag,
  ID_JAG_SKEW_SECONDS,
  type IdJagClaims,
  type IdJagInput,
  type IdJagPolicy,
  MAX_JTI_LENGTH,
  namedParties,
  signatureVerifiedBefore,
} from "./id_jag.ts";
import type { IssuerKeys } from "./issuer_keys.ts";
import { JWT_BEARER, SCOPES_SUPPORTED } from "./metadata.ts";

/** One assertion's outcome, for the audit line: never the assertion itself. */
export interface IdJagOutcome {
  iss?: string;
  sub?: string;
  client: string;
  jti?: string;
  outcome: "issued" | "refused";
  /**
   * Whether the signature verified before the outcome: false, iss, sub and jti are only what
   * the sender wrote (anyone may name anyone in an assertion that never verifies).
   */
  verified: boolean;
  /** The check or step that refused it. */
  check?: string;
  reason?: string;
}

export interface JwtBearerDeps {
  policy: IdJagPolicy;
  keys: IssuerKeys;
  clock: Clock;
  grants: GrantStore;
  /** The sign-in provider: an ID-JAG of its issuer names the person its login names. */
  login: { issuer?: string; kind: string; groupsClaim?: string };
  /**
   * The groups the person's last sign-in named and when (the clock's ms), for an ID-JAG without
   * the groups claim.
   */
  groupsAtLastLogin(subject: string): Promise<{ groups: string[]; at: number } | undefined>;
  /** Keeps groups read again from the provider as the person's latest, read now. */
  rememberGroups(identity: Identity): Promise<void>;
  onOutcome(outcome: IdJagOutcome): void;
}

/** What the token endpoint's own checks need (token.ts passes its `TokenDeps`). */
export interface JwtBearerContext {
  resolveResource(resource: string): string | undefined;
  checkAccess(identity: Identity): string | undefined;
  checkServerAccess(identity: Identity, audience: string[]): string | undefined;
  /**
   * The person as the provider states them now when their groups are older than
   * `oauth.groupsMaxAge` (token.ts's `currentIdentity`); left out, the identity as read.
   */
  currentIdentity?(
    identity: Identity,
  ): Promise<{ ok: true; identity: Identity } | { ok: false; reason: string }>;
}

const MAX_GROUPS = 200;
const MAX_GROUP_LENGTH = 256;

/** The checked grant: who, for which service, with which scope, in which new family. */
export interface JwtBearerGrant {
  familyId: string;
  context: GrantContext;
}

/**
 * Runs the grant for an authenticated `client`; throws `OAuthError` naming the refusal. The
 * caller issues the access token from the result.
 */
export async function jwtBearerGrant(
  form: URLSearchParams,
  client: ClientRecord,
  deps: JwtBearerDeps,
  context: JwtBearerContext,
): Promise<JwtBearerGrant> {
  if (client.tokenEndpointAuthMethod === "none") {
    throw new OAuthError(
      "unauthorized_client",
      "a public client cannot use the jwt-bearer grant; register a confidential client (client_secret_basic or client_secret_post)",
    );
  }
  if (!client.grantTypes.includes(JWT_BEARER)) {
    throw new OAuthError(
      "unauthorized_client",
      `this client did not register the ${JWT_BEARER} grant`,
    );
  }
  const assertions = form.getAll("assertion");
  if (assertions.length > 1) {
    throw new OAuthError("invalid_request", "the assertion parameter is repeated");
  }
  if (!assertions[0]) throw new OAuthError("invalid_request", "assertion is required");
  const input: IdJagInput = {
    assertion: assertions[0],
    clientId: client.clientId,
    now: Math.floor(deps.clock.now() / 1000),
    policy: deps.policy,
    keys: deps.keys,
  };
  const refuse = (
    check: string,
    reason: string,
    code: "invalid_grant" | "invalid_scope" = "invalid_grant",
  ) => {
    const jti = input.jws?.payload.jti;
    deps.onOutcome({
      ...namedParties(input.jws),
      client: client.clientId,
      jti: typeof jti === "string" && jti.length <= MAX_JTI_LENGTH ? jti : undefined,
      outcome: "refused",
      verified: signatureVerifiedBefore(check),
      check,
      reason,
    });
    return new OAuthError(code, reason);
  };
  const checked = await checkIdJag(input);
  if (!checked.ok) throw refuse(checked.check, checked.reason);
  const claims = checked.claims;
  const service = serviceOf(form, claims, context);
  if (typeof service !== "string") throw refuse("resource", service.refusal);
  const scope = scopeOf(form, claims);
  if (scope === undefined) {
    throw refuse(
      "scope",
      "none of the requested scopes is in the assertion's scope",
      "invalid_scope",
    );
  }
  let identity = await identityOf(claims, deps);
  // Groups taken from a sign-in (`describedAt` set) are as old as it: past groupsMaxAge the
  // provider is asked again, so a person it took out of a group is judged without it.
  if (identity.describedAt !== undefined && context.currentIdentity) {
    const current = await context.currentIdentity(identity);
    if (!current.ok) throw refuse("access", current.reason);
    if (current.identity.describedAt !== identity.describedAt) {
      await deps.rememberGroups(current.identity);
    }
    identity = current.identity;
  }
  const refusal = context.checkAccess(identity);
  if (refusal) throw refuse("access", `the person may not use this gateway: ${refusal}`);
  const serverRefusal = context.checkServerAccess(identity, [service]);
  if (serverRefusal) {
    throw refuse("access", `the person may not use this service: ${serverRefusal}`);
  }
  const grant: GrantContext = { clientId: client.clientId, identity, audience: [service], scope };
  const expiresAt = (claims.exp + ID_JAG_SKEW_SECONDS) * 1000;
  const familyId = await deps.grants.openOnce(grant, "id-jag", {
    key: KEYS.idJagJti(claims.iss, claims.jti),
    expiresAt,
  });
  if (familyId === undefined) {
    throw refuse(
      "jti",
      "the assertion was already used (its jti was seen before); ask the identity provider for a new one",
    );
  }
  deps.onOutcome({
    iss: claims.iss,
    sub: claims.sub,
    client: client.clientId,
    jti: claims.jti,
    outcome: "issued",
    verified: true,
  });
  return { familyId, context: grant };
}

/**
 * The one service the token opens: named by the assertion's `resource`, the request's, or
 * both alike. The IdP's choice binds: a request cannot point the assertion elsewhere.
 */
function serviceOf(
  form: URLSearchParams,
  claims: IdJagClaims,
  context: JwtBearerContext,
): string | { refusal: string } {
  const requested = form.getAll("resource");
  if (requested.length > 1) return { refusal: "name one resource; this grant opens one service" };
  const fromClaim = claims.resource === undefined
    ? undefined
    : context.resolveResource(claims.resource);
  if (claims.resource !== undefined && !fromClaim) {
    return { refusal: "the assertion's resource names no service of this gateway" };
  }
  const fromRequest = requested[0] === undefined
    ? undefined
    : context.resolveResource(requested[0]);
  if (requested[0] !== undefined && !fromRequest) {
    return { refusal: "the requested resource names no service of this gateway" };
  }
  if (fromClaim && fromRequest && fromClaim !== fromRequest) {
    return { refusal: "the requested resource is not the assertion's resource" };
  }
  const service = fromClaim ?? fromRequest;
  return service ?? {
    refusal: "no service named: the assertion carries no resource and the request sends none",
  };
}

/**
 * The scope granted: what the request asks (all the assertion allows when it asks nothing),
 * within the assertion's `scope` (all Gatehouse grants when it has none) and what Gatehouse
 * grants at all; undefined when that leaves nothing.
 */
function scopeOf(form: URLSearchParams, claims: IdJagClaims): string | undefined {
  const allowed = (claims.scopes ?? [...SCOPES_SUPPORTED]).filter((scope) =>
    (SCOPES_SUPPORTED as readonly string[]).includes(scope)
  );
  const requested = form.get("scope")?.split(" ").filter((s) => s !== "") ?? allowed;
  const granted = [...new Set(requested.filter((scope) => allowed.includes(scope)))];
  return granted.length > 0 ? granted.join(" ") : undefined;
}

/**
 * The person: as the sign-in provider's login names them when the assertion comes from it
 * (same subject, so their grants, credentials and consents are one), else under the issuer's
 * name. Groups from the configured claim when the assertion carries it, else those of the
 * person's last sign-in, with its time as `describedAt`.
 */
async function identityOf(claims: IdJagClaims, deps: JwtBearerDeps): Promise<Identity> {
  const subject = claims.iss === deps.login.issuer
    ? `${deps.login.kind}:${claims.sub}`
    : `${claims.iss}#${claims.sub}`;
  const all = claims.all;
  const groupsClaim = deps.login.groupsClaim;
  const raw = groupsClaim === undefined ? undefined : all[groupsClaim];
  const lastLogin = Array.isArray(raw) || groupsClaim === undefined
    ? undefined
    : await deps.groupsAtLastLogin(subject);
  const groups = Array.isArray(raw)
    ? raw.filter((g): g is string =>
      typeof g === "string" && g !== "" && g.length <= MAX_GROUP_LENGTH
    )
      .slice(0, MAX_GROUPS)
    : lastLogin?.groups;
  return {
    subject,
    email: typeof all.email === "string" ? all.email : undefined,
    emailVerified: typeof all.email_verified === "boolean" ? all.email_verified : undefined,
    name: typeof all.name === "string" ? all.name : undefined,
    ...(groups !== undefined && { groups }),
    ...(lastLogin !== undefined && { describedAt: lastLogin.at }),
  };
}
