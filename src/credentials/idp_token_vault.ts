/**
 * The company identity provider's tokens for each person, kept sealed from their latest
 * sign-in: AES-256-GCM under their own key (purpose `idp-tokens`), the subject as associated
 * data so a record copied to another person does not open. One record per person, whichever
 * grant or feature uses it: re-reading groups at a refresh (`idp_identity.ts`), acting as the
 * person at the provider (an RFC 8693 exchange). A refresh at the provider that rotates the
 * refresh token writes back with `replace`, conditioned on the record read, so two replicas
 * refreshing at once never keep the older token: the loser reads the winner's record instead.
 * On one replica, every refresh of a person's tokens, whichever feature asks, runs through
 * `oneAtATime`: a provider that rotates refresh tokens takes one used twice for a stolen one and
 * revokes the person's sign-in.
 */
import type { Clock } from "../core/clock.ts";
import type { IdpTokens } from "../core/idp_tokens.ts";
import { seal, unseal } from "../crypto/aead.ts";
import { KEYS } from "../store/keys.ts";
import type { Store, StoreEntry } from "../store/store.ts";

interface SealedIdpTokens {
  sealed: string;
  expiresAt: number;
}

/** A person's record as read: the tokens (absent when none, or unreadable), and its version. */
export interface KeptIdpTokens {
  tokens?: IdpTokens;
  /** Present but not openable (another master secret, or tampered with). */
  unreadable?: true;
  /** The record as read, for a `replace` conditioned on it. */
  entry: StoreEntry<SealedIdpTokens>;
}

export class IdpTokenVault {
  /** Per person, the end of the last refresh queued (`oneAtATime`). */
  readonly #refreshing = new Map<string, Promise<void>>();

  /**
   * `keys[0]` seals; every key is tried when opening (secret rotation). A record lives `keepMs`
   * past its last write (a refresh token's lifetime at the gateway: as long as a grant may).
   */
  constructor(
    private readonly options: { store: Store; keys: CryptoKey[]; clock: Clock; keepMs: number },
  ) {}

  async read(subject: string): Promise<KeptIdpTokens> {
    const { store, keys, clock } = this.options;
    const entry = await store.getEntry<SealedIdpTokens>(KEYS.idpTokens(subject));
    const record = entry.value;
    if (!record || record.expiresAt <= clock.now()) return { entry };
    const text = typeof record.sealed === "string"
      ? await unseal(keys, record.sealed, associatedData(subject))
      : undefined;
    if (text === undefined) return { entry, unreadable: true };
    try {
      return { entry, tokens: JSON.parse(text) as IdpTokens };
    } catch {
      return { entry, unreadable: true };
    }
  }

  /** Keeps the tokens of a fresh sign-in, in place of whatever was kept before. */
  async keep(subject: string, tokens: IdpTokens): Promise<void> {
    const record = await this.#sealed(subject, tokens);
    await this.options.store.set(KEYS.idpTokens(subject), record, record.expiresAt);
  }

  /**
   * Writes `tokens` only if the record is still the one `seen` (read with `read`): false when
   * another sign-in or refresh wrote first; read again and use theirs.
   */
  async replace(subject: string, seen: KeptIdpTokens, tokens: IdpTokens): Promise<boolean> {
    const record = await this.#sealed(subject, tokens);
    return await this.options.store.commitIfUnchanged([seen.entry], {
      writes: [{ key: KEYS.idpTokens(subject), value: record, expiresAt: record.expiresAt }],
    });
  }

  /**
   * Runs `work` (a refresh of `subject`'s tokens at the provider) after any other started on
   * this replica has ended, whoever started it. `work` reads the record itself, so it sees what
   * the refresh before it wrote.
   */
  async oneAtATime<T>(subject: string, work: () => Promise<T>): Promise<T> {
    const before = this.#refreshing.get(subject) ?? Promise.resolve();
    const mine = before.then(work);
    const ended = mine.then(() => {}, () => {});
    this.#refreshing.set(subject, ended);
    try {
      return await mine;
    } finally {
      if (this.#refreshing.get(subject) === ended) this.#refreshing.delete(subject);
    }
  }

  /** Forgets the person's tokens (the provider no longer knows them, or refused a refresh). */
  async forget(subject: string): Promise<void> {
    await this.options.store.delete(KEYS.idpTokens(subject));
  }

  async #sealed(subject: string, tokens: IdpTokens): Promise<SealedIdpTokens> {
    const { keys, clock, keepMs } = this.options;
    return {
      sealed: await seal(keys[0], JSON.stringify(tokens), associatedData(subject)),
      expiresAt: clock.now() + keepMs,
    };
  }
}

/** A subject is text from the provider; the NUL keeps the purpose label apart from it. */
function associatedData(subject: string): string {
  return `gatehouse-idp-tokens\0${subject}`;
}
