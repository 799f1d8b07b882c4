/**
 * A person's groups kept no older than `oauth.groupsMaxAge`: before tokens are issued from an
 * identity whose groups are older, the company identity provider is asked again with the tokens
 * kept from the person's sign-in (idp_token_vault.ts), refreshed there when they must be.
 *
 * - The provider answers: the groups (and GitHub organisations) are replaced, the new tokens kept.
 * - The provider refuses (it no longer knows the person, or their refresh fails with
 *   invalid_grant): the grant is to end; the kept tokens are forgotten.
 * - The provider cannot be asked (down, no tokens kept, none that still work): the last groups
 *   stay, and the log says so, each time, until it can be asked again.
 *
 * Calls for one person are made one at a time on this replica: a person's many grants
 * refreshing together ask the provider once, and never beside another refresh of their tokens
 * (the vault's `oneAtATime`). Across replicas, a refresh token the provider
 * rotated is written back only over the record read; a refusal after another replica rotated
 * it first is asked again with the tokens that replica kept, never taken for the person's end.
 */
import type { Clock } from "../core/clock.ts";
import { GatehouseError } from "../core/errors.ts";
import type { Identity } from "../core/identity.ts";
import type { IdpTokens } from "../core/idp_tokens.ts";
import type { Logger } from "../observability/logger.ts";
import type { IdpTokenVault, KeptIdpTokens } from "./idp_token_vault.ts";

/** What the provider says of a person asked again (idp/provider.ts's `renew`, structurally). */
export interface IdpRenewer {
  renew(
    subject: string,
    tokens: IdpTokens,
  ): Promise<{ groups?: string[]; orgs?: string[]; tokens: IdpTokens }>;
}

/** An identity fit to issue tokens from, or why the grant must end. */
export type Described = { ok: true; identity: Identity } | { ok: false; reason: string };

export class IdentityRenewal {
  readonly #asking = new Map<string, Promise<Described>>();

  constructor(
    private readonly options: {
      vault: IdpTokenVault;
      provider: IdpRenewer;
      clock: Clock;
      logger: Logger;
      maxAgeMs: number;
    },
  ) {}

  /** `identity` as it is when its groups are recent enough; else as the provider states it now. */
  current(identity: Identity): Promise<Described> {
    const { clock, maxAgeMs } = this.options;
    const age = clock.now() - (identity.describedAt ?? 0);
    if (age < maxAgeMs) return Promise.resolve({ ok: true, identity });
    const asking = this.#asking.get(identity.subject);
    if (asking) return asking.then((described) => this.#applied(identity, described));
    // After any refresh of the person's tokens another feature (an exchange) has under way.
    const next = this.options.vault.oneAtATime(identity.subject, () => this.#ask(identity))
      .finally(() => this.#asking.delete(identity.subject));
    this.#asking.set(identity.subject, next);
    return next;
  }

  /** Another grant's answer for the same person, applied to this grant's identity. */
  #applied(identity: Identity, described: Described): Described {
    if (!described.ok) return described;
    const { groups, orgs, describedAt } = described.identity;
    return {
      ok: true,
      identity: { ...identity, groups, orgs, describedAt },
    };
  }

  async #ask(identity: Identity): Promise<Described> {
    const { vault, provider, clock, logger } = this.options;
    const subject = identity.subject;
    let kept = await vault.read(subject);
    for (let attempt = 0; attempt < 2; attempt++) {
      if (!kept.tokens) {
        logger.warn(
          "the person's groups could not be read again: no identity provider tokens are kept for them; the last groups stay",
          {
            subject,
            reason: kept.unreadable
              ? "unreadable (another master secret?)"
              : "none kept (signed in before they were kept?)",
            hint: "they are kept from the person's next sign-in",
          },
        );
        return { ok: true, identity };
      }
      try {
        const renewal = await provider.renew(subject, kept.tokens);
        await vault.replace(subject, kept, renewal.tokens);
        return {
          ok: true,
          identity: {
            ...identity,
            ...(renewal.groups !== undefined && { groups: renewal.groups }),
            ...(renewal.orgs !== undefined && { orgs: renewal.orgs }),
            describedAt: clock.now(),
          },
        };
      } catch (error) {
        if (!(error instanceof GatehouseError)) throw error;
        if (error.code !== "revoked") {
          logger.warn(
            "the identity provider could not be asked about the person; the last groups stay",
            {
              subject,
              reason: error.message,
            },
          );
          return { ok: true, identity };
        }
        const now = await vault.read(subject);
        if (!rewritten(kept, now)) {
          await vault.forget(subject);
          logger.info("the identity provider no longer accepts the person; their grant ends", {
            subject,
            reason: error.message,
          });
          return {
            ok: false,
            reason: "the identity provider no longer accepts this person's sign-in; sign in again",
          };
        }
        // Another replica (or a new sign-in) wrote the tokens meanwhile: ask with theirs.
        kept = now;
      }
    }
    return { ok: true, identity };
  }
}

function rewritten(before: KeptIdpTokens, after: KeptIdpTokens): boolean {
  return after.entry.version !== null && after.entry.version !== before.entry.version;
}
