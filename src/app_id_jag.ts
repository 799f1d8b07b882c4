/**
 * Enterprise-managed authorization wired for app_auth_server.ts: the jwt-bearer grant for
 * ID-JAGs (trusted issuers' keys fetched through `idp/issuer_jwks.ts`, each assertion's outcome
 * an audit line), the operator's confidential clients, and the start-up look at each issuer's
 * discovery that `gatehouse check` cannot make (it does no network).
 */
import type { ConfiguredClient } from "./config/id_jag_types.ts";
import type { OAuthConfig } from "./config/types.ts";
import type { Clock } from "./core/clock.ts";
import type { ClientId } from "./core/ids.ts";
import { sha256Base64Url } from "./crypto/base64url.ts";
import { discoverIssuer, fetchIssuerJwks } from "./idp/issuer_jwks.ts";
import type { ClientRecord } from "./oauth/clients.ts";
import type { GrantStore } from "./oauth/grants.ts";
import { IssuerKeys } from "./oauth/issuer_keys.ts";
import type { JwtBearerDeps } from "./oauth/jwt_bearer.ts";
import { JWT_BEARER, type MetadataOptions } from "./oauth/metadata.ts";
import { PersonGroups } from "./oauth/person_groups.ts";
import { auditIdJag } from "./observability/audit.ts";
import type { Logger } from "./observability/logger.ts";
import type { Store } from "./store/store.ts";

export interface IdJagParts {
  /** Absent unless `oauth.idJag` is configured. */
  jwtBearer?: JwtBearerDeps;
  personGroups: PersonGroups;
  configuredClients: ClientRecord[];
  metadata: MetadataOptions;
}

export async function idJagParts(
  issuer: string,
  oauth: OAuthConfig,
  deps: { store: Store; clock: Clock; logger: Logger; grants: GrantStore },
): Promise<IdJagParts> {
  const { store, clock, logger, grants } = deps;
  const personGroups = new PersonGroups(store, clock, oauth.refreshTokenTtlMs);
  const configuredClients = await Promise.all(oauth.clients.map(configuredClient));
  const idJag = oauth.idJag;
  if (!idJag) return { personGroups, configuredClients, metadata: {} };
  for (const trusted of idJag.issuers) void warnWithoutKeys(trusted, clock, logger);
  return {
    personGroups,
    configuredClients,
    metadata: { idJag: true },
    jwtBearer: {
      policy: {
        audience: issuer,
        trustedIssuers: idJag.issuers,
        maxLifetimeMs: idJag.maxLifetimeMs,
      },
      keys: new IssuerKeys((trusted) => fetchIssuerJwks(trusted, clock), clock),
      clock,
      grants,
      login: {
        issuer: oauth.idp.issuer,
        kind: oauth.idp.provider,
        groupsClaim: oauth.idp.groupsClaim,
      },
      groupsAtLastLogin: (subject) => personGroups.groupsOf(subject),
      rememberGroups: (identity) => personGroups.remember(identity),
      onOutcome: (outcome) => auditIdJag(logger, outcome),
    },
  };
}

async function configuredClient(client: ConfiguredClient): Promise<ClientRecord> {
  return {
    clientId: client.id as ClientId,
    clientSecretHash: await sha256Base64Url(client.secret.reveal()),
    redirectUris: [],
    grantTypes: [JWT_BEARER],
    responseTypes: [],
    tokenEndpointAuthMethod: client.authMethod,
    clientName: client.name,
    issuedAt: 0,
    source: "configured",
  };
}

/**
 * An issuer whose discovery names no `jwks_uri` (or cannot be read) has every ID-JAG refused:
 * said once at start, as `check` does no network.
 */
async function warnWithoutKeys(trusted: string, clock: Clock, logger: Logger): Promise<void> {
  try {
    const discovery = await discoverIssuer(trusted, clock);
    if (typeof discovery.jwks_uri === "string") return;
    logger.warn("an ID-JAG issuer's discovery names no jwks_uri; its ID-JAGs will be refused", {
      issuer: trusted,
      hint: "publish the signing keys at jwks_uri in the issuer's discovery document",
    });
  } catch (error) {
    logger.warn(
      "an ID-JAG issuer's discovery could not be read; its keys are fetched again on use",
      {
        issuer: trusted,
        error: (error as Error).message,
        hint:
          "check oauth.idJag.issuers: each must be the issuer exactly as its discovery names it",
      },
    );
  }
}
