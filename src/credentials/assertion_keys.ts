/**
 * The keys that sign identity assertions to backends (docs/identity.md): ES256 key pairs, one
 * record in storage for every replica, the private halves sealed (AES-256-GCM under their own
 * `assertion-keys` key, the kid as associated data). The first key signs at once; a key
 * `rotate()` makes is published first and signs only from `KEY_ACTIVATION_MS` later, when every
 * replica's JWKS has listed it for longer than a backend caches one (the replica that rotated
 * signs no sooner than one that has not read the record again). The key it replaces signs until
 * then and stays published until every assertion it can have signed has expired (a replica
 * reads the record again within `REREAD_MS`, reuses an assertion for at most a minute, and an
 * assertion lives five), then it is dropped at the next rotation.
 */
import type { Clock } from "../core/clock.ts";
import { seal, unseal } from "../crypto/aead.ts";
import { decodeBase64Url, encodeBase64Url } from "../crypto/base64url.ts";
import { randomBase64Url } from "../crypto/random.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";

/** How long an assertion lives (its `exp` after its `iat`). */
export const ASSERTION_TTL_MS = 5 * 60_000;
/** How long one assertion is sent again before a new one is signed. */
export const ASSERTION_REUSE_MS = 60_000;
/** How often a replica reads the key record again (to learn of a rotation elsewhere). */
export const REREAD_MS = 30_000;
/** How long a backend may keep the JWKS (its route's `cache-control: max-age`), in seconds. */
export const JWKS_MAX_AGE_S = 60;
/**
 * A rotation's new key signs this long after it is stored: every replica publishes it within
 * `REREAD_MS`, and a JWKS fetched just before lives `JWKS_MAX_AGE_S` in a backend's cache; the
 * rest is a margin for replicas' clocks.
 */
export const KEY_ACTIVATION_MS = REREAD_MS + JWKS_MAX_AGE_S * 1000 + 30_000;
/** A retired key stays published this long: every assertion it signed has expired by then. */
export const PUBLISHED_AFTER_RETIREMENT_MS = REREAD_MS + ASSERTION_REUSE_MS +
  ASSERTION_TTL_MS + 60_000;

const EC = { name: "ECDSA", namedCurve: "P-256" } as const;

interface StoredKey {
  kid: string;
  /** The PKCS #8 private key, base64url, sealed. */
  sealed: string;
  publicJwk: JsonWebKey;
  createdAt: number;
  /** From when it signs (a rotation's key; the first signs at once). */
  signsFrom?: number;
  /** When a rotation's new key takes over signing from it. */
  retiredAt?: number;
}

interface KeyRecord {
  keys: StoredKey[];
}

interface KeyRead {
  at: number;
  record: KeyRecord;
  kid: string;
  signing: Promise<SigningKey>;
}

/** The key that signs now. */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

/** A published key, as a JWKS lists it. */
export type PublicKey = JsonWebKey & { kid: string; alg: "ES256"; use: "sig" };

export class AssertionKeys {
  #read?: KeyRead;
  #reading?: Promise<KeyRecord>;

  /** `sealKeys[0]` seals; every one is tried when opening (master secret rotation). */
  constructor(
    private readonly options: { store: Store; sealKeys: CryptoKey[]; clock: Clock },
  ) {}

  /** The key that signs now (made and stored on first use, the same for every replica). */
  async signing(): Promise<SigningKey> {
    return await (await this.#current()).signing;
  }

  /** Every key a backend should accept now: the signing key and those recently retired. */
  async published(): Promise<PublicKey[]> {
    const { record } = await this.#current();
    const now = this.options.clock.now();
    return record.keys
      .filter((key) => key.retiredAt === undefined || now < publishedUntil(key))
      .map((key) => ({ ...key.publicJwk, kid: key.kid, alg: "ES256", use: "sig" }));
  }

  /**
   * A new signing key, published now and signing from `KEY_ACTIVATION_MS` later; the keys it
   * replaces sign until then and stay published until their assertions have expired, and keys
   * retired longer ago than that are dropped. Returns the new kid, when it signs, and the kids
   * still published besides it.
   */
  async rotate(): Promise<{ kid: string; signsFrom: number; previous: string[] }> {
    const { store, clock } = this.options;
    for (let attempt = 0; attempt < 5; attempt++) {
      const entry = await store.getEntry<KeyRecord>(KEYS.assertionKeys);
      const now = clock.now();
      const signsFrom = now + KEY_ACTIVATION_MS;
      const fresh = { ...await this.#newKey(), signsFrom };
      // Every key still signing, or yet to, hands over when the new one starts.
      const kept = (entry.value?.keys ?? [])
        .map((key) => (key.retiredAt ?? Infinity) > now ? { ...key, retiredAt: signsFrom } : key)
        .filter((key) => now < publishedUntil(key));
      const record = { keys: [fresh, ...kept] };
      if (
        await store.commitIfUnchanged([entry], {
          writes: [{ key: KEYS.assertionKeys, value: record }],
        })
      ) {
        this.#read = undefined;
        return { kid: fresh.kid, signsFrom, previous: kept.map((key) => key.kid) };
      }
    }
    throw new Error("the assertion keys kept changing while rotating them; try again");
  }

  /** The record as last read, read again after REREAD_MS; one read at a time. */
  async #current(): Promise<KeyRead> {
    const now = this.options.clock.now();
    if (this.#read && now - this.#read.at < REREAD_MS) return this.#read;
    this.#reading ??= this.#load().finally(() => this.#reading = undefined);
    const record = await this.#reading;
    // The newest key whose time to sign has come (the keys are kept newest first).
    const chosen = record.keys.find((key) => (key.signsFrom ?? 0) <= now) ?? record.keys.at(-1)!;
    if (this.#read?.kid !== chosen.kid) {
      const signing = this.#open(chosen);
      // A failed open is tried again at the next read, not kept.
      signing.catch(() => this.#read = undefined);
      return this.#read = { at: now, record, kid: chosen.kid, signing };
    }
    return this.#read = { ...this.#read, at: now, record };
  }

  async #load(): Promise<KeyRecord> {
    const { store } = this.options;
    const entry = await store.getEntry<KeyRecord>(KEYS.assertionKeys);
    if (entry.value?.keys.length) return entry.value;
    // The first replica to start writes the first key; the others read the winner's.
    const record = { keys: [await this.#newKey()] };
    await store.commitIfUnchanged([entry], {
      writes: [{ key: KEYS.assertionKeys, value: record }],
    });
    const won = await store.get<KeyRecord>(KEYS.assertionKeys);
    if (!won?.keys.length) throw new Error("the assertion keys could not be stored");
    return won;
  }

  async #newKey(): Promise<StoredKey> {
    const pair = await crypto.subtle.generateKey(EC, true, ["sign", "verify"]) as CryptoKeyPair;
    const kid = randomBase64Url(12);
    const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
    const { kty, crv, x, y } = await crypto.subtle.exportKey("jwk", pair.publicKey);
    return {
      kid,
      sealed: await seal(this.options.sealKeys[0], encodeBase64Url(pkcs8), associatedData(kid)),
      publicJwk: { kty, crv, x, y },
      createdAt: this.options.clock.now(),
    };
  }

  async #open(key: StoredKey): Promise<SigningKey> {
    const text = await unseal(this.options.sealKeys, key.sealed, associatedData(key.kid));
    const bytes = text === undefined ? undefined : decodeBase64Url(text);
    if (!bytes) {
      throw new Error(
        "the assertion signing key cannot be opened (stored under another master secret?); list the secret it was made with under previousSecrets, or run gatehouse keys rotate",
      );
    }
    const privateKey = await crypto.subtle.importKey("pkcs8", bytes, EC, false, ["sign"]);
    return { kid: key.kid, privateKey };
  }
}

function publishedUntil(key: StoredKey): number {
  return (key.retiredAt ?? Infinity) + PUBLISHED_AFTER_RETIREMENT_MS;
}

function associatedData(kid: string): string {
  return `gatehouse-assertion-key\0${kid}`;
}
