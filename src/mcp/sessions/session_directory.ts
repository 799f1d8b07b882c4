/**
 * Where shared session records live: the gateway's storage, which every replica sees. A record
 * holds what a replica needs to continue a session another one opened; a tombstone keeps a
 * session ended for good ended. Every write is conditional on what it replaces, so a replica
 * renewing or continuing a session after its end is refused instead of publishing it again.
 * Only shared_sessions.ts reads and writes here.
 */
import type { Clock } from "../../core/clock.ts";
import type { Principal } from "../../core/principal.ts";
import { KEYS } from "../../store/keys.ts";
import type { Store } from "../../store/store.ts";

export interface SharedSessionRecord {
  server: string;
  principal: Principal;
  backendSessionId: string;
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  /** The replica that served the session last. */
  owner: string;
  /** Epoch ms; renewed while the session is in use. */
  expiresAt: number;
}

/**
 * What is left of a session ended for good. Until `expiresAt` (as long as any record of it could
 * still be renewed) no replica writes its record again: a write from a replica that still held
 * a copy, landing after the end, cannot bring the session back.
 */
interface Tombstone {
  ended: true;
  expiresAt: number;
}

type Stored = SharedSessionRecord | Tombstone;

/** Where shared session records live (the gateway's storage). */
export interface SessionDirectory {
  /** The session's record; undefined when there is none, it expired, or the session ended. */
  find(id: string): Promise<SharedSessionRecord | undefined>;
  /**
   * Writes the record, atomically, unless the session was ended; `renew` writes only over a
   * live record (a session that ended or expired meanwhile stays so). True when written.
   */
  save(id: string, record: SharedSessionRecord, mode: "create" | "renew"): Promise<boolean>;
  /** Ends the session for good: until `until` nobody finds, renews or creates its record. */
  end(id: string, until: number): Promise<void>;
}

/** Writers racing on one record retry this often before giving up. */
const SAVE_ATTEMPTS = 8;

/** Shared session records in the gateway's storage, where every replica sees them. */
export function storeSessionDirectory(store: Store, clock: Clock): SessionDirectory {
  const live = (value: Stored | undefined): SharedSessionRecord | undefined =>
    value && !("ended" in value) && value.expiresAt > clock.now() ? value : undefined;
  return {
    find: async (id) => live(await store.get<Stored>(KEYS.sharedSession(id))),
    async save(id, record, mode) {
      const key = KEYS.sharedSession(id);
      for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
        const entry = await store.getEntry<Stored>(key);
        const current = entry.value;
        if (current && "ended" in current && current.expiresAt > clock.now()) return false;
        if (mode === "renew" && !live(current)) return false;
        const write = { key, value: record, expiresAt: record.expiresAt };
        if (await store.commitIfUnchanged([entry], { writes: [write] })) return true;
      }
      throw new Error(
        `storage: the shared session record kept changing; gave up after ${SAVE_ATTEMPTS} attempts`,
      );
    },
    end: (id, until) =>
      store.set<Tombstone>(KEYS.sharedSession(id), { ended: true, expiresAt: until }, until),
  };
}
