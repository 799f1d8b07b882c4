/**
 * The latest audit events this replica wrote, kept in memory for the operator console's Audit
 * page and live view: a ring of fixed size, so it costs the same however busy the gateway is.
 * The trail itself is the "audit" log lines; this is a window on the newest of them.
 */

export type EventKind = "call" | "tool_change" | "admin";

export interface RecentEvent {
  /** Increasing within this process: the live view sends what is newer than it has. */
  seq: number;
  at: number;
  kind: EventKind;
  /** The person (e-mail address, else user id), or the admin for an admin action. */
  person?: string;
  server?: string;
  /** What happened: a method and its target, a tool change, an admin's action. */
  what: string;
  outcome: string;
  /** Further fields as recorded (arguments when the trail keeps them): shown, never trusted. */
  detail?: Record<string, unknown>;
}

export interface EventFilter {
  person?: string;
  server?: string;
  kind?: string;
  outcome?: string;
}

export class RecentEvents {
  readonly #ring: (RecentEvent | undefined)[];
  #next = 0;
  #seq = 0;

  constructor(readonly capacity = 5_000) {
    this.#ring = new Array(capacity);
  }

  add(event: Omit<RecentEvent, "seq">): void {
    this.#ring[this.#next] = { ...event, seq: ++this.#seq };
    this.#next = (this.#next + 1) % this.capacity;
  }

  get latestSeq(): number {
    return this.#seq;
  }

  /**
   * Newest first, the ones `filter` admits: page `page` (from 0) of `size`, and whether an
   * older page exists.
   */
  query(filter: EventFilter, page: number, size: number): { events: RecentEvent[]; more: boolean } {
    const events: RecentEvent[] = [];
    const skip = page * size;
    let matched = 0;
    for (let i = 1; i <= this.capacity; i++) {
      const event = this.#ring[(this.#next - i + this.capacity) % this.capacity];
      if (!event) break;
      if (!matches(event, filter)) continue;
      matched++;
      if (matched <= skip) continue;
      if (events.length === size) return { events, more: true };
      events.push(event);
    }
    return { events, more: false };
  }

  /** Events newer than `seq`, oldest first, at most `limit`. */
  since(seq: number, limit: number): RecentEvent[] {
    const out: RecentEvent[] = [];
    for (let i = 1; i <= this.capacity && out.length < limit; i++) {
      const event = this.#ring[(this.#next - i + this.capacity) % this.capacity];
      if (!event || event.seq <= seq) break;
      out.push(event);
    }
    return out.reverse();
  }
}

function matches(event: RecentEvent, filter: EventFilter): boolean {
  if (filter.kind && event.kind !== filter.kind) return false;
  if (filter.outcome && event.outcome !== filter.outcome) return false;
  if (filter.server && event.server !== filter.server) return false;
  if (filter.person && event.person?.toLowerCase() !== filter.person.toLowerCase()) return false;
  return true;
}
