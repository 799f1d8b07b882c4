/**
 * `userToken.kind: exchange`: the token a backend gets for a person is one the company identity
 * provider issues for it (RFC 8693), in exchange for the person's own access token at the
 * provider, kept sealed from their sign-in (idp_token_vault.ts) and refreshed there first when
 * it has expired. Issued tokens are kept per person and backend until shortly before they expire,
 * one exchange at a time per pair, so a busy person costs the provider one call per lifetime.
 *
 * What the person hears (as `CredentialRequiredError`, never a 502): the provider refused
 * (invalid_grant, invalid_target: they may not use the backend, or their sign-in no longer
 * counts), or no provider tokens are kept for them (a sign-in from before this was configured):
 * sign in again. A provider that cannot be reached is `ExchangeUnavailableError`: try again, and
 * the log says so. No token, refresh token or provider answer is ever logged.
 */
import type { ExchangeUserToken } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import { CredentialRequiredError } from "../core/credential_required.ts";
import { GatehouseError } from "../core/errors.ts";
import { accessTokenLive, type IdpTokens } from "../core/idp_tokens.ts";
import type { Logger } from "../observability/logger.ts";
import { auditTokenExchange } from "../observability/audit.ts";
import type { IdpTokenVault } from "./idp_token_vault.ts";

/** An issued token is used until this long before it expires. */
export const EXCHANGE_MARGIN_MS = 30_000;
/** A token whose lifetime the provider did not say is kept this long. */
const UNSAID_LIFETIME_MS = 60_000;
const CACHE_LIMIT = 10_000;

/** What the provider does for an exchange (idp/provider.ts, structurally). */
export interface IdpExchanger {
  renew(subject: string, tokens: IdpTokens): Promise<{ tokens: IdpTokens }>;
  exchange?(
    accessToken: string,
    request: { audience: string; scopes: string[]; resource?: string },
  ): Promise<{ token: string; expiresIn?: number }>;
}

/** The identity provider could not be reached for a person's token: worth trying again. */
export class ExchangeUnavailableError extends GatehouseError<"exchange_unavailable"> {
  constructor(message: string) {
    super("exchange_unavailable", message);
  }
}

export class TokenExchange {
  readonly #kept = new Map<string, { token: string; until: number }>();
  readonly #asking = new Map<string, Promise<string>>();
  /** Per person, the refresh of their provider tokens under way, which every backend joins. */
  readonly #refreshing = new Map<string, Promise<string>>();

  constructor(
    private readonly options: {
      vault: IdpTokenVault;
      provider: IdpExchanger;
      clock: Clock;
      logger: Logger;
      /** Where each exchange is recorded: issued, refused or unavailable (never the token). */
      auditLogger: Logger;
      /** Where a person is sent when they must sign in again or may not use a backend. */
      pageUrl: string;
    },
  ) {}

  /** The token `server`'s backend gets for `user` (the provider's subject). */
  tokenFor(user: string, server: string, spec: ExchangeUserToken): Promise<string> {
    const key = `${user}\0${server}`;
    const kept = this.#kept.get(key);
    if (kept && this.options.clock.now() < kept.until) return Promise.resolve(kept.token);
    let asking = this.#asking.get(key);
    if (!asking) {
      asking = this.#exchange(user, server, spec, key).finally(() => this.#asking.delete(key));
      this.#asking.set(key, asking);
    }
    return asking;
  }

  /** Forgets what was issued for `user` (a refusal by the backend: ask the provider again). */
  forget(user: string, server: string): void {
    this.#kept.delete(`${user}\0${server}`);
  }

  async #exchange(user: string, server: string, spec: ExchangeUserToken, key: string) {
    const { provider, clock } = this.options;
    if (!provider.exchange) throw this.#signInAgain(server, spec, "the provider has no exchange");
    const subjectToken = await this.#subjectToken(user, server, spec);
    let issued: { token: string; expiresIn?: number };
    try {
      issued = await provider.exchange(subjectToken, {
        audience: spec.audience,
        scopes: spec.scopes,
        ...(spec.resource !== undefined && { resource: spec.resource }),
      });
    } catch (error) {
      throw this.#failure(error, user, server, spec);
    }
    const lifetime = issued.expiresIn === undefined
      ? UNSAID_LIFETIME_MS
      : Math.max(0, issued.expiresIn * 1000 - EXCHANGE_MARGIN_MS);
    if (this.#kept.size >= CACHE_LIMIT) this.#kept.delete(this.#kept.keys().next().value!);
    this.#kept.set(key, { token: issued.token, until: clock.now() + lifetime });
    this.#audit(user, server, spec, "issued");
    return issued.token;
  }

  /** The person's access token at the provider, refreshed there when it has expired. */
  async #subjectToken(user: string, server: string, spec: ExchangeUserToken): Promise<string> {
    const { vault, clock } = this.options;
    const kept = await vault.read(user);
    if (!kept.tokens) {
      this.#audit(user, server, spec, "refused", "no sign-in of theirs is kept");
      throw this.#signInAgain(
        server,
        spec,
        kept.unreadable ? "the kept sign-in cannot be read" : "no sign-in is kept for them",
      );
    }
    if (accessTokenLive(kept.tokens, clock.now())) return kept.tokens.accessToken;
    // Joined rather than queued: behind a provider that does not answer, each backend would
    // otherwise wait out its timeout once more.
    let refreshing = this.#refreshing.get(user);
    if (!refreshing) {
      refreshing = vault.oneAtATime(user, () => this.#renewed(user))
        .finally(() => this.#refreshing.delete(user));
      this.#refreshing.set(user, refreshing);
    }
    try {
      return await refreshing;
    } catch (error) {
      throw this.#failure(error, user, server, spec);
    }
  }

  /**
   * The person's tokens refreshed at the provider, one refresh at a time per person on this
   * replica (the vault's `oneAtATime`): the record is read again first, so backends waiting
   * behind a refresh take the tokens it kept. A refusal after another replica refreshed first
   * is asked again with the tokens it kept.
   */
  async #renewed(user: string): Promise<string> {
    const { vault, provider, clock } = this.options;
    let kept = await vault.read(user);
    for (let attempt = 0;; attempt++) {
      if (!kept.tokens) throw new GatehouseError("revoked", "the kept sign-in is gone");
      if (accessTokenLive(kept.tokens, clock.now())) return kept.tokens.accessToken;
      try {
        const { tokens } = await provider.renew(user, kept.tokens);
        await vault.replace(user, kept, tokens);
        return tokens.accessToken;
      } catch (error) {
        const now = attempt === 0 ? await vault.read(user) : kept;
        if (now.entry.version === null || now.entry.version === kept.entry.version) throw error;
        kept = now;
      }
    }
  }

  #failure(error: unknown, user: string, server: string, spec: ExchangeUserToken): Error {
    if (!(error instanceof GatehouseError)) return error as Error;
    if (error.code === "refused" || error.code === "revoked") {
      this.#audit(user, server, spec, "refused", error.message);
      return new CredentialRequiredError(
        server,
        this.options.pageUrl,
        `The company sign-in gave no ${spec.displayName} token for you (${error.message}): sign in again through your MCP client; if that does not help, you may not be allowed to use ${spec.displayName}.`,
      );
    }
    this.#audit(user, server, spec, "unavailable", error.message);
    this.options.logger.warn("token exchange failed: the identity provider could not be asked", {
      server,
      user,
      reason: error.message,
      hint: "the person's calls fail until it answers; they may try again",
    });
    return new ExchangeUnavailableError(
      `The company identity provider could not be asked for your ${spec.displayName} token (${error.code}); try again in a minute.`,
    );
  }

  #audit(
    user: string,
    server: string,
    spec: ExchangeUserToken,
    outcome: "issued" | "refused" | "unavailable",
    reason?: string,
  ): void {
    auditTokenExchange(this.options.auditLogger, {
      server,
      user,
      audience: spec.audience,
      outcome,
      ...(reason !== undefined && { reason }),
    });
  }

  #signInAgain(server: string, spec: ExchangeUserToken, why: string): CredentialRequiredError {
    return new CredentialRequiredError(
      server,
      this.options.pageUrl,
      `${spec.displayName} needs your company sign-in (${why}): sign in again through your MCP client.`,
    );
  }
}
