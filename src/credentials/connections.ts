/**
 * Connecting a person's account at a service over OAuth: the authorization URL with PKCE and
 * a `state` bound to the SSO session that asked, then the callback's code exchanged once and
 * the tokens handed to `save` (the vault, through UserCredentials).
 */
import type { Clock } from "../core/clock.ts";
import { sha256Base64Url } from "../crypto/base64url.ts";
import { s256Challenge } from "../crypto/pkce.ts";
import { randomBase64Url } from "../crypto/random.ts";
import type { Logger } from "../observability/logger.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import type { ServiceOAuthClient } from "./service_oauth.ts";
import type { StoredCredential } from "./vault.ts";

/** How long a person has to finish connecting a service account. */
const CONNECT_TTL_MS = 10 * 60_000;

/** A connection waiting for the service's callback. */
export interface PendingConnect {
  user: string;
  service: string;
  /** Hash of the SSO session that started it: only that browser session may finish it. */
  sessionHash: string;
  codeVerifier: string;
  /** Where the person goes afterwards; opaque here. */
  next: string;
  /** The authorization server the person was sent to, when discovered (kind: mcp). */
  issuer?: string;
  /** The scopes asked for: what a token answer without `scope` was granted (RFC 6749 §5.1). */
  scope?: string;
  expiresAt: number;
}

export interface ServiceConnectionsDeps {
  baseUrl: string;
  store: Store;
  clock: Clock;
  logger: Logger;
  /** The OAuth client of each `kind: oauth` service. */
  oauthClients: Map<string, ServiceOAuthClient>;
  save(user: string, service: string, credential: StoredCredential): Promise<void>;
  /** Scopes a server asked for beyond the person's connection (a step-up), if any. */
  stepUpScopes?(user: string, service: string): Promise<string[] | undefined>;
}

export class ServiceConnections {
  constructor(private readonly deps: ServiceConnectionsDeps) {}

  /** Where the service sends the person back; register it at the service. */
  callbackUri(service: string): string {
    return `${this.deps.baseUrl}/oauth/callback/${service}`;
  }

  /** The service's authorization URL for this person. */
  async begin(
    options: { user: string; service: string; sessionHash: string; next: string },
  ): Promise<URL> {
    const client = this.#client(options.service);
    const state = randomBase64Url(24);
    const codeVerifier = randomBase64Url(48);
    const start = await client.authorizationUrl({
      state,
      codeChallenge: await s256Challenge(codeVerifier),
      redirectUri: this.callbackUri(options.service),
      scopes: await this.deps.stepUpScopes?.(options.user, options.service),
    });
    const pending: PendingConnect = {
      ...options,
      codeVerifier,
      issuer: start.issuer,
      scope: start.scope,
      expiresAt: this.deps.clock.now() + CONNECT_TTL_MS,
    };
    await this.deps.store.set(
      KEYS.serviceConnect(await sha256Base64Url(state)),
      pending,
      pending.expiresAt,
    );
    return start.url;
  }

  /** The pending connection a callback's state names, taken (it can be finished once). */
  async take(state: string): Promise<PendingConnect | undefined> {
    const pending = await this.deps.store.consume<PendingConnect>(
      KEYS.serviceConnect(await sha256Base64Url(state)),
    );
    return pending && pending.expiresAt > this.deps.clock.now() ? pending : undefined;
  }

  /** Exchanges the callback's code and saves the tokens; throws `ServiceOAuthError`. */
  async finish(pending: PendingConnect, callbackUrl: URL, state: string): Promise<void> {
    const tokens = await this.#client(pending.service).exchange({
      callbackUrl,
      state,
      codeVerifier: pending.codeVerifier,
      redirectUri: this.callbackUri(pending.service),
      issuer: pending.issuer,
    });
    await this.deps.save(pending.user, pending.service, {
      source: "oauth",
      ...tokens,
      scope: tokens.scope ?? pending.scope,
      issuer: tokens.issuer ?? pending.issuer,
      updatedAt: this.deps.clock.now(),
    });
    this.deps.logger.info("service connected", { service: pending.service, user: pending.user });
  }

  #client(service: string): ServiceOAuthClient {
    const client = this.deps.oauthClients.get(service);
    if (!client) throw new Error(`${service} is not connected over OAuth`);
    return client;
  }
}
