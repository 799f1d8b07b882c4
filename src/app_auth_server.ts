/**
 * The authorization server's parts wired together for the composition root (app.ts): keys
 * derived from the master secret, the client directory, grants, SSO sessions, the identity
 * provider and its access policy, people's service credentials, the browser flows, and the
 * verifier that MCP endpoints check access tokens with.
 */
import type { OAuthConfig, ResolvedConfig } from "./config/types.ts";
import type { Identity } from "./core/identity.ts";
import { deriveAesKey, deriveHmacKey } from "./crypto/keys.ts";
import { createServiceOAuthClient, type ServiceOAuthClient } from "./credentials/service_oauth.ts";
import { ServiceConnections } from "./credentials/connections.ts";
import { UserCredentials } from "./credentials/user_credentials.ts";
import { CredentialVault } from "./credentials/vault.ts";
import type { AuthServer } from "./http/oauth_routes.ts";
import { createIdentityProvider } from "./idp/create.ts";
import { checkAccess } from "./idp/policy.ts";
import { guardedFetchJson } from "./net/guarded_fetch.ts";
import { AccessTokens } from "./oauth/access_tokens.ts";
import { ClientDirectory } from "./oauth/client_directory.ts";
import { GrantStore } from "./oauth/grants.ts";
import { resolveResource, serviceUri } from "./oauth/services.ts";
import { TokenVerifier } from "./oauth/token_verifier.ts";
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
}

/** The authorization server's parts, wired together. */
export async function createAuthServer(
  config: ResolvedConfig,
  oauthConfig: OAuthConfig,
  master: Secret,
  deps: AuthServerDeps,
): Promise<{ server: AuthServer; verifier: TokenVerifier; credentials: UserCredentials }> {
  const { store, clock, logger } = deps;
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
  const grants = new GrantStore(store, clock, {
    codeMs: oauthConfig.authorizationCodeTtlMs,
    refreshMs: oauthConfig.refreshTokenTtlMs,
    accessMs: oauthConfig.accessTokenTtlMs,
  });
  const cimd = oauthConfig.clientMetadataDocuments;
  const clients = new ClientDirectory({
    store,
    clock,
    unusedClientTtlMs: oauthConfig.unusedClientTtlMs,
    redirectSchemes: oauthConfig.redirectSchemes,
    fetchMetadataDocument: cimd.enabled ? (url) => guardedFetchJson(url, cimd, clock) : undefined,
  });
  const resolve = (resource: string) => {
    const name = resolveResource(issuer, resource, (n) => config.servers.has(n));
    return name ? serviceUri(issuer, name) : undefined;
  };
  const access = (identity: Identity) => checkAccess(identity, oauthConfig.allow);
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
  for (const server of config.servers.values()) {
    if (server.userToken?.kind === "oauth") {
      oauthClients.set(server.name, createServiceOAuthClient(server.userToken, clock));
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
  });
  const loginFlow = new LoginFlow({
    issuer,
    oauth: oauthConfig,
    store,
    clock,
    logger,
    clients,
    grants,
    sso,
    idp: createIdentityProvider(oauthConfig.idp, clock),
    cookies,
    resolveResource: resolve,
    checkAccess: access,
    credentialsMissing: (audience, user) =>
      credentials.missingFor(audience.map((uri) => uri.slice(issuer.length + 1)), user),
  });
  return {
    server: {
      issuer,
      clients,
      loginFlow,
      credentialFlow: new CredentialFlow({
        issuer,
        sso,
        credentials,
        connections,
        loginFlow,
        logger,
      }),
      tokenDeps: { clients, grants, accessTokens, checkAccess: access, resolveResource: resolve },
    },
    verifier: new TokenVerifier({ issuer, accessTokens, grants, clock }),
    credentials,
  };
}
