/**
 * People's own credentials for the services that act as them: what state each is in, the
 * current token for a session (refreshed shortly before it expires, once per person and
 * service however many sessions ask), manual tokens, and forgetting a credential (revoked at
 * the service first). Connecting an account is connections.ts. Tokens live in the vault; this
 * module never logs one.
 */
import { checkManualToken } from "./manual_token.ts";
import type { ServerConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import { CredentialRequiredError } from "../core/credential_required.ts";
import type { Logger } from "../observability/logger.ts";
import { type ServiceOAuthClient, ServiceOAuthError, type ServiceTokens } from "./service_oauth.ts";
export { MAX_TOKEN_BYTES, TokenInputError } from "./manual_token.ts";
import {
  type CredentialService,
  type CredentialStatus,
  givenByPerson,
  STEP_UP_LIMITS,
  stepUpRequired,
  stepUpScopes,
  usableCredential,
} from "./usable.ts";
export type { CredentialService, CredentialStatus } from "./usable.ts";
import { type CredentialVault, type StoredCredential, UNREADABLE } from "./vault.ts";

/** A token expiring sooner than this is refreshed before it is handed out. */
export const REFRESH_MARGIN_MS = 60_000;
/** Tokens handed out are remembered this long, so a busy session reads the vault rarely. */
const CACHE_MS = 5_000;
const CACHE_LIMIT = 10_000;

export interface UserCredentialsDeps {
  baseUrl: string;
  servers: Map<string, ServerConfig>;
  vault: CredentialVault;
  clock: Clock;
  logger: Logger;
  /** The OAuth client of each `kind: oauth` service. */
  oauthClients: Map<string, ServiceOAuthClient>;
}

interface CachedToken {
  token: string;
  expiresAt?: number;
  checkedAt: number;
}

type ChangeListener = (user: string, service: string) => void;

export class UserCredentials {
  readonly #cache = new Map<string, CachedToken>();
  readonly #refreshing = new Map<string, Promise<string>>();
  readonly #listeners = new Set<ChangeListener>();

  constructor(private readonly deps: UserCredentialsDeps) {}

  /** Every service whose credential people give themselves, in configuration order. */
  services(): CredentialService[] {
    return [...this.deps.servers.values()].flatMap((server) => this.service(server.name) ?? []);
  }

  service(name: string): CredentialService | undefined {
    const userToken = givenByPerson(this.deps.servers.get(name)?.userToken);
    return userToken ? { name, userToken } : undefined;
  }

  /** The services these servers use that need a person's credential (aggregates: members). */
  neededBy(serverNames: string[]): CredentialService[] {
    const names = new Set<string>();
    for (const name of serverNames) {
      const server = this.deps.servers.get(name);
      if (!server) continue;
      for (const used of server.transport === "aggregate" ? server.members : [name]) {
        if (this.service(used)) names.add(used);
      }
    }
    return [...names].map((name) => this.service(name)!);
  }

  /** Of the services these servers use, those the person has no usable credential for. */
  async missingFor(serverNames: string[], user: string): Promise<string[]> {
    const missing: string[] = [];
    for (const { name } of this.neededBy(serverNames)) {
      if ((await this.status(user, name)).state !== "connected") missing.push(name);
    }
    return missing;
  }

  /** The page where the person manages this service's credential. */
  pageUrl(service: string): string {
    return `${this.deps.baseUrl}/my/tokens?service=${encodeURIComponent(service)}`;
  }

  /** Called after a credential of a person changes in this process (set, connect, delete). */
  onChange(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async status(user: string, service: string): Promise<CredentialStatus> {
    const stored = await this.deps.vault.get(user, service);
    if (stored === undefined) return { state: "missing" };
    if (stored === UNREADABLE) {
      return { state: "reconnect", reason: "the stored credential can no longer be read" };
    }
    if (stored.needsReconnect) return { state: "reconnect", reason: stored.needsReconnect };
    return {
      state: "connected",
      source: stored.source,
      updatedAt: stored.updatedAt,
      ending: stored.source === "manual" && stored.accessToken.length >= 20
        ? stored.accessToken.slice(-4)
        : undefined,
      ...(stored.scope !== undefined && { scope: stored.scope }),
      ...(stored.expiresAt !== undefined && { expiresAt: stored.expiresAt }),
    };
  }

  /**
   * The person's current token for a service, refreshed first when it is close to expiry.
   * Throws `CredentialRequiredError` (naming the page to visit) when there is none to use.
   */
  async tokenFor(user: string, service: string): Promise<string> {
    const key = cacheKey(user, service);
    const now = this.deps.clock.now();
    const cached = this.#cache.get(key);
    if (cached && now - cached.checkedAt < CACHE_MS && !this.#expiring(cached.expiresAt, now)) {
      return cached.token;
    }
    const stored = await this.deps.vault.get(user, service);
    const credential = this.#usable(stored, service);
    let token = credential.accessToken;
    if (credential.source === "oauth" && this.#expiring(credential.expiresAt, now)) {
      token = await this.#refreshOnce(user, service, credential);
      return token;
    }
    this.#remember(key, { token, expiresAt: credential.expiresAt, checkedAt: now });
    return token;
  }

  /**
   * A backend refused `token` (a remote MCP server, `kind: mcp`). On `401` the token is refreshed
   * (unless another request already did) and the new one returned for one retry; a refresh that
   * fails, or a token refused again right after it (`retried`), means connecting again. On `403
   * insufficient_scope` the wider scopes are kept for the next connection and the person is asked
   * to connect again (a step-up); scopes that are not RFC 6749 scope tokens, or too many, are not
   * asked for, and the refusal is passed on (undefined). Throws `CredentialRequiredError` naming
   * the page whenever the person has to act.
   */
  async rejected(
    user: string,
    service: string,
    token: string,
    answer: { status: number; challenge: string | null; retried?: boolean },
  ): Promise<string | undefined> {
    const stored = this.#usable(await this.deps.vault.get(user, service), service);
    this.#cache.delete(cacheKey(user, service));
    if (answer.status === 403) {
      const wanted = stepUpScopes(stored.scope, answer.challenge);
      if (!wanted) {
        this.deps.logger.warn("the server asked for scopes Gatehouse does not ask for", {
          service,
          user,
          reason: STEP_UP_LIMITS,
        });
        return undefined;
      }
      await this.deps.vault.put(user, service, { ...stored, stepUpScopes: wanted });
      this.deps.logger.info("the server asked for more scopes", { service, user, scopes: wanted });
      const name = this.service(service)?.userToken.displayName ?? service;
      throw stepUpRequired(service, name, this.pageUrl(service), wanted);
    }
    if (answer.retried) {
      // Refreshing again would be refused alike, on every call.
      if (stored.accessToken !== token) return undefined;
      this.deps.logger.warn("the server refused the token again right after it was refreshed", {
        service,
        user,
      });
      const reason = "the server refused even a freshly refreshed token";
      return await this.#needsReconnect(user, service, stored, reason);
    }
    if (stored.accessToken !== token) return stored.accessToken;
    this.deps.logger.info("the server refused the token; refreshing it", { service, user });
    return await this.#refreshOnce(user, service, stored, true);
  }

  /** Scopes a server asked for beyond the person's connection (a step-up), for the next one. */
  async stepUpScopes(user: string, service: string): Promise<string[] | undefined> {
    const stored = await this.deps.vault.get(user, service);
    return stored && stored !== UNREADABLE ? stored.stepUpScopes : undefined;
  }

  /** Stores a pasted token after checking it; throws `TokenInputError` with the reason. */
  async setManual(user: string, service: string, raw: string): Promise<void> {
    const spec = this.service(service)?.userToken;
    if (!spec || spec.kind !== "manual") throw new Error(`${service} takes no manual token`);
    const token = checkManualToken(raw, spec.pattern);
    await this.save(user, service, {
      source: "manual",
      accessToken: token,
      updatedAt: this.deps.clock.now(),
    });
  }

  /**
   * Forgets the person's credential for a service. A connected OAuth account is revoked at the
   * service first, when it offers revocation: the result says whether that happened.
   */
  async remove(user: string, service: string): Promise<"revoked" | "not_offered" | "failed"> {
    const stored = await this.deps.vault.get(user, service);
    let outcome: "revoked" | "not_offered" | "failed" = "not_offered";
    const client = this.deps.oauthClients.get(service);
    if (client && stored && stored !== UNREADABLE && stored.source === "oauth") {
      try {
        // Revoking the refresh token ends the grant at most services; the access token too.
        const revoked = stored.refreshToken
          ? await client.revoke(stored.refreshToken, "refresh_token", stored.issuer)
          : await client.revoke(stored.accessToken, "access_token", stored.issuer);
        if (revoked && stored.refreshToken) {
          await client.revoke(stored.accessToken, "access_token", stored.issuer).catch(() => {});
        }
        outcome = revoked ? "revoked" : "not_offered";
      } catch (error) {
        this.deps.logger.warn("revocation at the service failed", {
          service,
          user,
          reason: (error as Error).message,
        });
        outcome = "failed";
      }
    }
    await this.deps.vault.delete(user, service);
    this.#changed(user, service);
    return outcome;
  }

  #client(service: string): ServiceOAuthClient {
    const client = this.deps.oauthClients.get(service);
    if (!client) throw new Error(`${service} is not connected over OAuth`);
    return client;
  }

  /** Stores a credential and tells this process's sessions it changed. */
  async save(user: string, service: string, credential: StoredCredential): Promise<void> {
    await this.deps.vault.put(user, service, credential);
    this.#changed(user, service);
  }

  #changed(user: string, service: string): void {
    this.#cache.delete(cacheKey(user, service));
    for (const listener of this.#listeners) {
      try {
        listener(user, service);
      } catch (error) {
        this.deps.logger.warn("credential change listener failed", { error });
      }
    }
  }

  #expiring(expiresAt: number | undefined, now: number): boolean {
    return expiresAt !== undefined && expiresAt - now < REFRESH_MARGIN_MS;
  }

  #usable(
    stored: StoredCredential | typeof UNREADABLE | undefined,
    service: string,
  ): StoredCredential {
    const spec = this.service(service)?.userToken;
    return usableCredential(stored, {
      service,
      name: spec?.displayName ?? service,
      page: this.pageUrl(service),
      verb: spec?.kind === "manual" ? "add" : "connect",
    });
  }

  /** One refresh per person and service at a time; concurrent callers share its outcome. */
  #refreshOnce(
    user: string,
    service: string,
    credential: StoredCredential,
    refused = false,
  ): Promise<string> {
    const key = cacheKey(user, service);
    let running = this.#refreshing.get(key);
    if (!running) {
      running = this.#refresh(user, service, credential, refused).finally(() => {
        this.#refreshing.delete(key);
      });
      this.#refreshing.set(key, running);
    }
    return running;
  }

  /** `refused`: the backend refused the token, so it is as good as expired. */
  async #refresh(
    user: string,
    service: string,
    seen: StoredCredential,
    refused: boolean,
  ): Promise<string> {
    const { clock, logger, vault } = this.deps;
    // The caller read the vault before this refresh began; another refresh (here, in a flight
    // that just ended, or on another replica) may have stored a newer token since.
    const latest = await vault.get(user, service);
    const credential = latest && latest !== UNREADABLE && latest.updatedAt !== seen.updatedAt
      ? this.#usable(latest, service)
      : seen;
    if (
      credential !== seen && (refused || !this.#expiring(credential.expiresAt, clock.now()))
    ) {
      return credential.accessToken;
    }
    const name = this.service(service)?.userToken.displayName ?? service;
    const page = this.pageUrl(service);
    const expired = refused ||
      credential.expiresAt !== undefined && credential.expiresAt <= clock.now();
    if (!credential.refreshToken) {
      // Nothing to refresh with: usable until it expires, then the person reconnects.
      if (!expired) return credential.accessToken;
      return await this.#needsReconnect(
        user,
        service,
        credential,
        refused ? "the server no longer accepts the token" : "the access token expired",
      );
    }
    let tokens: ServiceTokens;
    try {
      tokens = await this.#client(service).refresh(credential.refreshToken, credential.issuer);
    } catch (error) {
      const cause = error as ServiceOAuthError;
      // Another replica may have rotated the refresh token first: use what it stored.
      const now = await vault.get(user, service);
      if (now && now !== UNREADABLE && now.updatedAt !== credential.updatedAt) {
        return this.#usable(now, service).accessToken;
      }
      logger.warn("service token refresh failed", { service, user, reason: cause.message });
      if (cause instanceof ServiceOAuthError && cause.code === "refused") {
        return await this.#needsReconnect(
          user,
          service,
          credential,
          "the service refused to refresh it",
        );
      }
      if (!expired) return credential.accessToken;
      throw new CredentialRequiredError(
        service,
        page,
        `your ${name} token expired and could not be refreshed (${cause.message}); try again shortly, or reconnect at ${page}`,
      );
    }
    const updated: StoredCredential = {
      source: "oauth",
      accessToken: tokens.accessToken,
      // Services that do not rotate refresh tokens answer without one: keep the old.
      refreshToken: tokens.refreshToken ?? credential.refreshToken,
      expiresAt: tokens.expiresAt,
      scope: tokens.scope ?? credential.scope,
      issuer: tokens.issuer ?? credential.issuer,
      updatedAt: clock.now(),
    };
    await vault.put(user, service, updated);
    this.#remember(cacheKey(user, service), {
      token: updated.accessToken,
      expiresAt: updated.expiresAt,
      checkedAt: clock.now(),
    });
    logger.info("service token refreshed", { service, user });
    return updated.accessToken;
  }

  async #needsReconnect(
    user: string,
    service: string,
    credential: StoredCredential,
    reason: string,
  ): Promise<never> {
    const marked = { ...credential, needsReconnect: reason, updatedAt: this.deps.clock.now() };
    await this.deps.vault.put(user, service, marked);
    this.#cache.delete(cacheKey(user, service));
    return this.#usable(marked, service) as never;
  }

  #remember(key: string, entry: CachedToken): void {
    if (this.#cache.size >= CACHE_LIMIT) {
      this.#cache.delete(this.#cache.keys().next().value!);
    }
    this.#cache.set(key, entry);
  }
}

function cacheKey(user: string, service: string): string {
  return `${service}\0${user}`;
}
