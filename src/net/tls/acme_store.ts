/**
 * What ACME leaves in the storage replicas share: the account key per directory, the
 * certificate per domain (both private keys sealed with a key derived from the master secret:
 * a copy of the storage alone does not let anyone impersonate the gateway), the order lock
 * that keeps two replicas from ordering at once, and the HTTP-01 answers any replica serves.
 */
import type { Clock } from "../../core/clock.ts";
import { seal, unseal } from "../../crypto/aead.ts";
import { KEYS } from "../../store/keys.ts";
import type { Store } from "../../store/store.ts";
import { type CertifiedKey, checkCertifiedKey } from "./certificate.ts";

interface StoredCertificate {
  cert: string;
  sealedKey: string;
  obtainedAt: number;
}

interface OrderLock {
  owner: string;
  expiresAt: number;
}

/** An order that takes longer than this is taken to have died with its replica. */
const ORDER_LOCK_MS = 10 * 60_000;
/** An HTTP-01 answer is kept this long; orders are done well within it. */
const CHALLENGE_MS = 30 * 60_000;

export class AcmeStore {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** The current key first (it seals), then earlier ones (they still open). */
    private readonly keys: CryptoKey[],
  ) {}

  /** The account key (PEM) for `directory`, made by `create` and kept the first time. */
  async accountKey(directory: string, create: () => Promise<string>): Promise<string> {
    const key = KEYS.acmeAccount(directory);
    const associated = `acme-account|${directory}`;
    const stored = await this.store.get<{ sealedKey: string }>(key);
    if (stored) {
      const opened = await unseal(this.keys, stored.sealedKey, associated);
      if (opened) return opened;
      // Sealed under a secret this gateway no longer has: a new account replaces it.
      const pem = await create();
      await this.store.set(key, { sealedKey: await seal(this.keys[0], pem, associated) });
      return pem;
    }
    const pem = await create();
    const sealedKey = await seal(this.keys[0], pem, associated);
    // Another replica may have stored one first: everyone uses the one stored.
    const winner = await this.store.setIfAbsent(key, { sealedKey });
    return (await unseal(this.keys, winner.sealedKey, associated)) ?? pem;
  }

  /** The stored certificate for `domain`, checked; undefined if none (or it cannot be opened). */
  async certificate(domain: string): Promise<(CertifiedKey & { obtainedAt: number }) | undefined> {
    const stored = await this.store.get<StoredCertificate>(KEYS.tlsCertificate(domain));
    if (!stored) return undefined;
    const key = await unseal(this.keys, stored.sealedKey, `tls-key|${domain}`);
    if (!key) return undefined;
    try {
      const where = { cert: "the stored certificate", key: "its stored key" };
      return { ...checkCertifiedKey(stored.cert, key, where), obtainedAt: stored.obtainedAt };
    } catch {
      return undefined;
    }
  }

  async saveCertificate(domain: string, cert: string, key: string): Promise<void> {
    const record: StoredCertificate = {
      cert,
      sealedKey: await seal(this.keys[0], key, `tls-key|${domain}`),
      obtainedAt: this.clock.now(),
    };
    await this.store.set(KEYS.tlsCertificate(domain), record);
  }

  /** Takes the order lock for `domain` unless another replica holds a live one. */
  async lock(domain: string, owner: string): Promise<boolean> {
    const key = KEYS.acmeOrderLock(domain);
    const entry = await this.store.getEntry<OrderLock>(key);
    const now = this.clock.now();
    if (entry.value && entry.value.owner !== owner && entry.value.expiresAt > now) return false;
    const expiresAt = now + ORDER_LOCK_MS;
    return await this.store.commitIfUnchanged([{ key, version: entry.version }], {
      writes: [{ key, value: { owner, expiresAt }, expiresAt }],
    });
  }

  async unlock(domain: string, owner: string): Promise<void> {
    const key = KEYS.acmeOrderLock(domain);
    const entry = await this.store.getEntry<OrderLock>(key);
    if (entry.value?.owner !== owner) return;
    await this.store.commitIfUnchanged([{ key, version: entry.version }], { deletes: [key] });
  }

  async setChallenge(token: string, keyAuthorization: string): Promise<void> {
    const expiresAt = this.clock.now() + CHALLENGE_MS;
    await this.store.set(KEYS.acmeChallenge(token), { keyAuthorization, expiresAt }, expiresAt);
  }

  async challenge(token: string): Promise<string | undefined> {
    const stored = await this.store.get<{ keyAuthorization: string; expiresAt: number }>(
      KEYS.acmeChallenge(token),
    );
    return stored && stored.expiresAt > this.clock.now() ? stored.keyAuthorization : undefined;
  }

  async removeChallenge(token: string): Promise<void> {
    await this.store.delete(KEYS.acmeChallenge(token));
  }
}
