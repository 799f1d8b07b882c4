/**
 * The authorization server's parts wired together for the composition root (app.ts): keys
 * derived from the master secret, the client directory, grants, SSO sessions, the identity
 * provider and its access policy, people's service credentials, the browser flows, and the
 * verifier that MCP endpoints check access tokens with.
 */
import { idJagParts } from "./app_id_jag.ts";
import { namedGroups } from "./config/named_groups.ts";
import type { OAuthConfig, ResolvedConfig } from "./config/types.ts";
import type { Identity } from "./core/identity.ts";
import { deriveAesKey, deriveHmacKey } from "./crypto/keys.ts";
import { createServiceOAuthClient, type ServiceOAuthClient } from "./credentials/service_oauth.ts";
import { ServiceConnections } from "./credentials/connections.ts";
import { upstreamClientDocumentUrl } from "./credentials/mcp_client_document.ts";
import { UpstreamIdentities } from "./credentials/mcp_identity.ts";
import { createMcpUpstreamClient } from "./credentials/mcp_upstream.ts";
import { UserCredentials } from "./credentials/user_credentials.ts";
import { CredentialVault } from "./credentials/vault.ts";
import { TokenExchange } from "./credentials/idp_exchange.ts";
import { IdpTokenVault } from "./credentials/idp_token_vault.ts";
import { IdentityRenewal } from "./credentials/idp_identity.ts";
import type { AuthServer } from "./http/oauth_routes.ts";
import { createIdentityProvider } from "./idp/create.ts";
import type { IdentityProvider } from "./idp/provider.ts";
import { checkAccess } from "./idp/policy.ts";
import { callerOfIdentity, firstRefusal, type Policies } from "./policy/server_policy.ts";
import { guardedFetchJson } from "./net/guarded_fetch.ts";
import { AccessTokens } from "./oauth/access_tokens.ts";
import { ClientDirectory } from "./oauth/client_directory.ts";
import { GrantAdmin } from "./oauth/grant_admin.ts";
import { GrantStore } from "./oauth/grants.ts";
import { Revocations } from "./oauth/revocations.ts";
import type { StatelessLinks } from "./mcp/stateless/stateless_links.ts";
import type { SessionRegistry } from "./mcp/sessions/sessions.ts";
import { resolveResource, serviceUri } from "./oauth/services.ts";
import { TokenVerifier } from "./oauth/token_verifier.ts";
import { AccessFlow } from "./web/access_flow.ts";
import { cookiePolicy } from "./web/cookies.ts";
import { CredentialFlow } from "./web/credential_flow.ts";
import { LoginFlow } from "./web/login_flow.ts";
import { SsoSessions } from "./web/sso.ts";
import type { Clock } from "./core/clock.ts";
import { Secret } from "./core/secret.ts";
import type { Logger } from "./observability/logger.ts";
import type { Store } from "./store/store.ts";

/** What the authorization server needs from the outside world. */
export interface AuthServerDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** This replica's revocations, carried across reloads (app.ts starts and stops them). */
  revocations: Revocations;
  /** The servers' `access:` and `tools:`, compiled for this configuration. */
  policies: Policies;
  /** Where audit events go (token exchanges); the logger by default. */
  auditLogger?: Logger;
}

/** The authorization server's parts, wired together. */
export async function createAuthServer(
  config: ResolvedConfig,
  oauthConfig: OAuthConfig,
  master: Secret,
  deps: AuthServerDeps,
): Promise<
  {
    server: AuthServer;
    verifier: TokenVerifier;
    credentials: UserCredentials;
    /** Backends' tokens from the company identity provider (`userToken.kind: exchange`). */
    exchange: TokenExchange;
    grants: GrantAdmin;
    sso: SsoSessions;
    /** The company identity provider (the console on its own listener signs in there too). */
    idp: IdentityProvider;
  }
> {
  const { store, clock, logger, revocations } = deps;
  const issuer = config.baseUrl;
  const signingKeys = await Promise.all(
    [master, ...config.previousSecrets].map((secret) => deriveHmacKey(secret, "jwt-signing")),
  );
  const accessTokens = new AccessTokens({
    issuer,
    keys: signingKeys,
    ttlMs: oauthConfig.accessTokenTtlMs,
    clock,
  });
  const grants = new GrantStore(
    store,
    clock,
    {
      codeMs: oauthConfig.authorizationCodeTtlMs,
      refreshMs: oauthConfig.refreshTokenTtlMs,
      accessMs: oauthConfig.accessTokenTtlMs,
    },
    (familyId, until) => revocations.noteRevoked(familyId, until),
  );
  const idJag = await idJagParts(issuer, oauthConfig, { store, clock, logger, grants });
  const cimd = oauthConfig.clientMetadataDocuments;
  const clients = new ClientDirectory({
    configured: idJag.configuredClients,
    store,
    clock,
    unusedClientTtlMs: oauthConfig.unusedClientTtlMs,
    redirectSchemes: oauthConfig.redirectSchemes,
    fetchMetadataDocument: cimd.enabled ? (url) => guardedFetchJson(url, cimd, clock) : undefined,
    issuer,
    // A metadata-document client's keys come under the same guard as its document.
    fetchJwks: cimd.enabled
      ? async (url) => (await guardedFetchJson(url, cimd, clock)).body
      : undefined,
  });
  const resolve = (resource: string) => {
    const name = resolveResource(issuer, resource, (n) => config.servers.has(n));
    return name ? serviceUri(issuer, name) : undefined;
  };
  const access = (identity: Identity) => checkAccess(identity, oauthConfig.allow);
  // Each server's own `access:`, for the audience a person asks for (at /authorize) or holds
  // (at each token request): service URIs are `${issuer}/${server}`.
  const serverAccess = (identity: Identity, audience: string[]) =>
    firstRefusal(
      deps.policies,
      audience.map((uri) => uri.slice(issuer.length + 1)),
      callerOfIdentity(identity),
    );
  const cookies = cookiePolicy(issuer);
  const sso = new SsoSessions({
    store,
    clock,
    ttlMs: oauthConfig.ssoSessionTtlMs,
    cookies,
    csrfKey: await deriveHmacKey(master, "csrf"),
  });
  const vaultKeys = await Promise.all(
    [master, ...config.previousSecrets].map((secret) => deriveAesKey(secret, "vault-encryption")),
  );
  const oauthClients = new Map<string, ServiceOAuthClient>();
  const upstreamIdentities = new UpstreamIdentities({
    store,
    keys: vaultKeys,
    clock,
    logger,
    metadataDocumentUrl: upstreamClientDocumentUrl(issuer),
    clientName: "Gatehouse",
  });
  for (const server of config.servers.values()) {
    if (server.userToken?.kind === "oauth") {
      oauthClients.set(server.name, createServiceOAuthClient(server.userToken, clock));
    }
    const remote = server.transport === "streamable-http" || server.transport === "sse";
    if (server.userToken?.kind === "mcp" && remote) {
      oauthClients.set(
        server.name,
        createMcpUpstreamClient({
          url: server.url,
          config: server.userToken,
          redirectUri: `${issuer}/oauth/callback/${server.name}`,
          identities: upstreamIdentities,
          clock,
        }),
      );
    }
  }
  const credentials = new UserCredentials({
    baseUrl: issuer,
    servers: config.servers,
    vault: new CredentialVault(store, vaultKeys),
    clock,
    logger,
    oauthClients,
  });
  const connections = new ServiceConnections({
    baseUrl: issuer,
    store,
    clock,
    logger,
    oauthClients,
    save: (user, service, credential) => credentials.save(user, service, credential),
    stepUpScopes: (user, service) => credentials.stepUpScopes(user, service),
  });
  // The provider's tokens of each person's latest sign-in, kept as long as a grant can live.
  const idpTokens = new IdpTokenVault({
    store,
    clock,
    keys: await Promise.all(
      [master, ...config.previousSecrets].map((secret) => deriveAesKey(secret, "idp-tokens")),
    ),
    keepMs: oauthConfig.refreshTokenTtlMs,
  });
  const idp = createIdentityProvider(oauthConfig.idp, clock, logger);
  const renewal = new IdentityRenewal({
    vault: idpTokens,
    provider: idp,
    clock,
    logger,
    maxAgeMs: oauthConfig.groupsMaxAgeMs,
  });
  const currentIdentity = (identity: Identity) => renewal.current(identity);
  const loginFlow = new LoginFlow({
    issuer,
    oauth: oauthConfig,
    store,
    clock,
    logger,
    clients,
    grants,
    sso,
    idp,
    idpTokens,
    currentIdentity,
    cookies,
    resolveResource: resolve,
    checkAccess: access,
    checkServerAccess: serverAccess,
    credentialsMissing: (audience, user) =>
      credentials.missingFor(audience.map((uri) => uri.slice(issuer.length + 1)), user),
    onLogin: (identity) => idJag.personGroups.remember(identity),
  });
  const grantAdmin = new GrantAdmin({ store, clock, grants, clients });
  await indexLegacyGrants(grantAdmin, logger);
  return {
    server: {
      issuer,
      metadata: { ...idJag.metadata, privateKeyJwt: cimd.enabled },
      clients,
      loginFlow,
      accessFlow: new AccessFlow({ issuer, sso, grants: grantAdmin, loginFlow, logger }),
      sso,
      revocationDeps: { clients, grants, accessTokens },
      credentialFlow: new CredentialFlow({
        issuer,
        sso,
        credentials,
        connections,
        loginFlow,
        logger,
      }),
      tokenDeps: {
        clients,
        grants,
        accessTokens,
        checkAccess: access,
        currentIdentity,
        checkServerAccess: (identity, audience) => serverAccess(identity, audience)?.reason,
        resolveResource: resolve,
        // Read at each issue: tests change the policy in place, as a reload would.
        namedGroups: () => namedGroups(config.servers.values(), oauthConfig.allow),
        jwtBearer: idJag.jwtBearer,
      },
    },
    verifier: new TokenVerifier({ issuer, accessTokens, grants, revocations, clock }),
    credentials,
    exchange: new TokenExchange({
      vault: idpTokens,
      provider: idp,
      clock,
      logger,
      auditLogger: deps.auditLogger ?? logger,
      pageUrl: `${issuer}/my/access`,
    }),
    grants: grantAdmin,
    sso,
    idp,
  };
}

/** This replica's revocations, read from `deps.store`; started by `watchRevocations`. */
export function newRevocations(
  { store, clock, logger }: { store: Store; clock: Clock; logger: Logger },
): Revocations {
  return new Revocations({
    store,
    clock,
    onError: (error) =>
      logger.warn("could not read the revoked grants; the ones known stay in force", {
        error,
        hint: "check that the storage is reachable; revocations made elsewhere wait until it is",
      }),
  });
}

/**
 * Reads the revocations and keeps polling them; a revoked grant's sessions end here, as on
 * every replica that learns of it.
 */
export async function watchRevocations(
  revocations: Revocations,
  sessions: SessionRegistry,
  links: StatelessLinks,
  logger: Logger,
): Promise<void> {
  revocations.onRevoked((grants) => {
    // A 2026 client's listen belongs to its own request's grant, whichever grant's request
    // opened the link under it: it ends here even when that link lives on.
    const listens = links.listens.endGrants(grants);
    if (listens) logger.info("listens of revoked grants ended", { listens, grants });
    void sessions.endGrants(grants, "the grant this session was opened with was revoked").then(
      (ended) =>
        ended && logger.info("sessions of revoked grants ended", { sessions: ended, grants }),
      (error) => logger.error("could not end the sessions of revoked grants", { grants, error }),
    );
  });
  await revocations.start();
}

/** Grants opened by an earlier version get their index entries, once per storage. */
async function indexLegacyGrants(grants: GrantAdmin, logger: Logger): Promise<void> {
  try {
    const indexed = await grants.indexLegacyGrants();
    if (indexed) logger.info("grants opened by an earlier version indexed", { grants: indexed });
  } catch (error) {
    logger.warn(
      "could not index grants opened by an earlier version; they are listed once refreshed",
      { error },
    );
  }
}
