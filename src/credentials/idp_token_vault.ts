/**
 * The company identity provider's tokens for each person, kept sealed from their latest
 * sign-in: AES-256-GCM under their own key (purpose `idp-tokens`), the subject as associated
 * data so a record copied to another person does not open. One record per person, whichever
 * grant or feature uses it: re-reading groups at a refresh (`idp_identity.ts`), acting as the
 * person at the provider (an RFC 8693 exchange). A refresh at the provider that rotates the
 * refresh token writes back with `replace`, conditioned on the record read, so two replicas
 * refreshing at once never keep the older token: the loser reads the winner's record instead.
 * Every refresh of a person's tokens, whichever feature asks and on whichever replica, runs
 * through `oneAtATime`: a provider that rotates refresh tokens takes one used twice for a stolen
 * one and revokes the person's sign-in. The conditional write alone does not prevent that: by
 * the time the loser reads the winner's record, the provider has already seen the reuse.
 */
import type { Clock } from "../core/clock.ts";
import type { IdpTokens } from "../core/idp_tokens.ts";
import { seal, unseal } from "../crypto/aead.ts";
import { KEYS } from "../store/keys.ts";
import type { Store, StoreEntry, StoreKey } from "../store/store.ts";

/**
 * How long a replica's hold on a person's refreshes lasts: longer than a refresh at the
 * provider may take (idp/provider.ts's 10 s timeout, and a second ask after a refusal), so the
 * provider never sees two replicas at once; short, so a replica that died holding it stops
 * nobody for long.
 */
export const REFRESH_LEASE_MS = 25_000;
/** Between two looks at another replica's hold (a pause between store reads, not gateway time). */
const LEASE_POLL_MS = 50;
/** Looks before going ahead without the hold: about REFRESH_LEASE_MS even on a frozen clock. */
const LEASE_POLLS = REFRESH_LEASE_MS / LEASE_POLL_MS;

/** One replica's hold on a person's refreshes (`oneAtATime`), until `expiresAt`. */
interface RefreshLease {
  holder: string;
  expiresAt: number;
}

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
   * this replica or another has ended, whoever started it. `work` reads the record itself, so it
   * sees what the refresh before it wrote (and refreshes with the token that one rotated in).
   * On this replica refreshes queue in memory; across replicas the queue's head holds a short
   * lease in the store, released after `work`. A hold that outlives its lease (a replica that
   * died holding it) is taken over; the wait is bounded either way.
   */
  async oneAtATime<T>(subject: string, work: () => Promise<T>): Promise<T> {
    const before = this.#refreshing.get(subject) ?? Promise.resolve();
    const mine = before.then(() => this.#leased(subject, work));
    const ended = mine.then(() => {}, () => {});
    this.#refreshing.set(subject, ended);
    try {
      return await mine;
    } finally {
      if (this.#refreshing.get(subject) === ended) this.#refreshing.delete(subject);
    }
  }

  async #leased<T>(subject: string, work: () => Promise<T>): Promise<T> {
    const key = KEYS.idpRefreshLease(subject);
    let lease: RefreshLease | undefined;
    for (let look = 0; !lease && look < LEASE_POLLS; look++) {
      lease = await this.#take(key);
      // A platform timer: a pause between two reads of the store, not gateway time.
      if (!lease) await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
    }
    // Not had within a lease's length: the holder is stuck; going ahead risks a refusal from
    // the provider, waiting longer holds the person's call for ever.
    try {
      return await work();
    } finally {
      if (lease) await this.#release(key, lease).catch(() => {/* it lapses by itself */});
    }
  }

  /** The lease on `key` when no other replica holds one that is still running. */
  async #take(key: StoreKey): Promise<RefreshLease | undefined> {
    const { store, clock } = this.options;
    const entry = await store.getEntry<RefreshLease>(key);
    if (entry.value && entry.value.expiresAt > clock.now()) return undefined;
    const lease = { holder: crypto.randomUUID(), expiresAt: clock.now() + REFRESH_LEASE_MS };
    const taken = await store.commitIfUnchanged([entry], {
      writes: [{ key, value: lease, expiresAt: lease.expiresAt }],
    });
    return taken ? lease : undefined;
  }

  /** Ends `lease`, unless it lapsed and another replica holds the key now. */
  async #release(key: StoreKey, lease: RefreshLease): Promise<void> {
    const { store } = this.options;
    const entry = await store.getEntry<RefreshLease>(key);
    if (entry.value?.holder !== lease.holder) return;
    await store.commitIfUnchanged([entry], { deletes: [key] });
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
