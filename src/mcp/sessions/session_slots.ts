/**
 * Places under the session limits (`limits.sessionsPerUser`, `limits.maxSessions`). A session
 * holds its place from the moment it is opened until its backend has stopped: a stdio child that
 * ignores SIGTERM keeps its place until the SIGKILL after the grace has ended it, so the limits
 * bound backend processes, not just session objects.
 *
 * Clients rarely end their sessions (the SDK's `close()` and mcp-remote send no DELETE), so a
 * person at their limit who opens another gets a place by ending their least recently used idle
 * session; only when every one of theirs is busy is the new one refused.
 */
import { GatehouseError } from "../../core/errors.ts";

/** A new session would go over a session limit. */
export class SessionLimitError extends GatehouseError<"too_many_sessions"> {
  constructor(message: string) {
    super("too_many_sessions", message);
  }
}

/** What a place needs to know of the session that holds it. */
export interface SlotHolder {
  readonly closed: boolean;
  /** Requests in flight and open client streams: a session with either is busy. */
  readonly pendingCount: number;
  readonly openStreams: number;
  /** Undefined while the session is still being set up for its first request. */
  readonly channel: unknown;
  /** The order of last activity (a sequence, so the same millisecond still orders). */
  readonly activity: { readonly recency: number };
  /** Settles once the session has ended and its backend has stopped. */
  readonly stopped: Promise<void>;
  close(reason: string): Promise<void>;
}

export interface Slot {
  readonly user: string;
  holder?: SlotHolder;
  /** An opening waits for this place's session to stop, and then takes the place over. */
  claimed: boolean;
}

export interface SlotLimits {
  sessionsPerUser: number;
  maxSessions: number;
}

/** Why the least recently used session ended, as its client is told. */
export const MADE_ROOM =
  "ended to make room for a newer session of the same person (limits.sessionsPerUser)";

export class SessionSlots {
  readonly #perUser = new Map<string, Set<Slot>>();
  #total = 0;

  constructor(
    private readonly limits: () => SlotLimits,
    /** Told when an idle session is ended to make room. */
    private readonly onEvict: (holder: SlotHolder, user: string) => void = () => {},
  ) {}

  /** Places held now, by sessions open or still stopping and by openings under way. */
  get total(): number {
    return this.#total;
  }

  /** Places `user` holds now. */
  heldBy(user: string): number {
    return this.#perUser.get(user)?.size ?? 0;
  }

  /**
   * A place for a new session of `user`. At their limit, a session of theirs already ending
   * hands its place on once its backend has stopped; failing that, their least recently used
   * idle session is ended to make room. Throws `SessionLimitError` when every session of theirs
   * is busy, or when the gateway holds `maxSessions`.
   */
  async reserve(user: string): Promise<Slot> {
    const { sessionsPerUser, maxSessions } = this.limits();
    const held = this.#perUser.get(user) ?? new Set<Slot>();
    if (held.size < sessionsPerUser) {
      if (this.#total >= maxSessions) {
        throw new SessionLimitError(
          `the gateway holds its maximum of ${maxSessions} sessions (limits.maxSessions); try again later`,
        );
      }
      const slot: Slot = { user, claimed: false };
      held.add(slot);
      this.#perUser.set(user, held);
      this.#total++;
      return slot;
    }
    const slot = handOver(held);
    const holder = slot?.holder;
    if (!slot || !holder) {
      throw new SessionLimitError(
        `too many open sessions for this user (limit ${sessionsPerUser}, limits.sessionsPerUser), ` +
          "and each has a request in flight or a stream open: end one with DELETE, or try " +
          "again once one is idle",
      );
    }
    slot.claimed = true;
    if (!holder.closed) {
      this.onEvict(holder, user);
      void holder.close(MADE_ROOM);
    }
    await holder.stopped;
    slot.holder = undefined;
    slot.claimed = false;
    return slot;
  }

  /** `holder` has the place until its backend has stopped (unless an opening takes it over). */
  hold(slot: Slot, holder: SlotHolder): void {
    slot.holder = holder;
    void holder.stopped.then(() => {
      if (slot.holder === holder && !slot.claimed) this.free(slot);
    });
  }

  /** Gives the place back (an opening that failed, or a session whose backend stopped). */
  free(slot: Slot): void {
    const held = this.#perUser.get(slot.user);
    if (!held?.delete(slot)) return;
    this.#total--;
    if (held.size === 0) this.#perUser.delete(slot.user);
  }
}

/**
 * The place to take over at the limit: one whose session is already ending (no session need
 * end for it), else the least recently used idle one. A session with a request in flight or a
 * stream open is busy, and so is one still being set up.
 */
function handOver(held: Set<Slot>): Slot | undefined {
  let idle: Slot | undefined;
  for (const slot of held) {
    const holder = slot.holder;
    if (!holder || slot.claimed) continue;
    if (holder.closed) return slot;
    if (holder.channel === undefined || holder.pendingCount > 0 || holder.openStreams > 0) continue;
    if (!idle || holder.activity.recency < idle.holder!.activity.recency) idle = slot;
  }
  return idle;
}
