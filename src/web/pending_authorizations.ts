/**
 * /authorize requests waiting for the person: across the identity provider's round trip, on the
 * consent page, and on the services step. Kept in the store under a random id until answered or
 * expired; ids that are not ours are refused before any lookup.
 */
import type { Clock } from "../core/clock.ts";
import { randomBase64Url } from "../crypto/random.ts";
import type { AuthorizationRequest } from "../oauth/authorize.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";

export interface PendingAuthorization {
  request: AuthorizationRequest;
  /** Set once someone is shown the consent page: only they may answer it. */
  subject?: string;
  /** The person allowed the client; what remains is connecting services (/oauth/services). */
  consented?: boolean;
  expiresAt: number;
}

/** 24 random bytes, base64url. */
const PENDING_ID = /^[A-Za-z0-9_-]{32}$/;

export class PendingAuthorizations {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  newId(): string {
    return randomBase64Url(24);
  }

  async save(id: string, pending: PendingAuthorization): Promise<void> {
    await this.store.set(KEYS.authorizeRequest(id), pending, pending.expiresAt);
  }

  /** The live request under this id, left in place. */
  async peek(id: string): Promise<PendingAuthorization | undefined> {
    if (!PENDING_ID.test(id)) return undefined;
    return this.#live(await this.store.get<PendingAuthorization>(KEYS.authorizeRequest(id)));
  }

  /** The live request under this id, removed: at most one caller gets it. */
  async take(id: string): Promise<PendingAuthorization | undefined> {
    if (!PENDING_ID.test(id)) return undefined;
    return this.#live(await this.store.consume<PendingAuthorization>(KEYS.authorizeRequest(id)));
  }

  #live(pending: PendingAuthorization | undefined): PendingAuthorization | undefined {
    return pending && pending.expiresAt > this.clock.now() ? pending : undefined;
  }
}
