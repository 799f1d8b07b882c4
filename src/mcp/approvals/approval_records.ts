/**
 * Held calls in the shared storage (every replica sees the same): one record per approval
 * under an unguessable id, the index a retry of the same call finds it by (person, server, tool,
 * digest of the canonical arguments), and the ids one person has waiting, capped. Every change
 * of state is a conditional write on the version read, so two replicas (two approvers, an
 * approver and the expiry, two retries using it) cannot both win: an approval is used once.
 */
import type { ApproverRule } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import { GatehouseError } from "../../core/errors.ts";
import { randomBase64Url } from "../../crypto/random.ts";
import { KEYS } from "../../store/keys.ts";
import type { Store, StoreEntry } from "../../store/store.ts";

export type ApprovalStatus = "pending" | "approved" | "denied" | "expired" | "used" | "ended";

export interface ApprovalRecord {
  id: string;
  status: ApprovalStatus;
  /** Who called: the person the approval is bound to. */
  person: { id: string; email?: string };
  /** The OAuth client the call came through, when known. */
  client?: string;
  /** The server the client called (an aggregate: the aggregate) and the tool by that name. */
  server: string;
  tool: string;
  /** The member whose rule held it, when the server is an aggregate. */
  member?: string;
  description?: string;
  /** SHA-256 of the canonical arguments: the call this approval is for. */
  digest: string;
  /** The arguments as the page shows them (long values folded: argument_view.ts). */
  shown: unknown;
  by: ApproverRule;
  requestedAt: number;
  expiresAt: number;
  decidedBy?: string;
  decidedAt?: number;
  /** The caller's grant: its revocation ends the approval. */
  grant?: string;
  /** Why it ended without running (a revoked grant, a tool held by tool integrity). */
  endedBecause?: string;
}

export type NewApproval = Omit<ApprovalRecord, "id" | "status" | "requestedAt" | "expiresAt">;

/** Who a decision made with `gatehouse approvals` is recorded as. */
export const OPERATOR_DECIDER = "operator (gatehouse approvals)";

/** Records stay this long past their expiry, so a late retry hears "expired", not "unknown". */
const KEEP_AFTER_MS = 10 * 60_000;
const RETRIES = 8;

export class ApprovalLimitError extends GatehouseError<"approval_limit"> {
  constructor(limit: number) {
    super(
      "approval_limit",
      `you already have ${limit} calls waiting for approval (limits.pendingApprovalsPerUser): ` +
        "decide or let some expire on /approvals, then call again",
    );
  }
}

interface Waiting {
  ids: { id: string; expiresAt: number }[];
}

export class ApprovalRecords {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  async get(id: string): Promise<ApprovalRecord | undefined> {
    if (!/^[A-Za-z0-9_-]{20,64}$/.test(id)) return undefined;
    return this.#current(await this.store.get<ApprovalRecord>(KEYS.approval(id)));
  }

  /** The approval a call with these facts was held under, if it still says anything. */
  async forCall(
    person: string,
    server: string,
    tool: string,
    digest: string,
  ): Promise<ApprovalRecord | undefined> {
    const bound = await this.store.get<{ id: string }>(
      KEYS.approvalBinding(person, server, tool, digest),
    );
    return bound ? await this.get(bound.id) : undefined;
  }

  /**
   * Records a new pending approval (or hands back the one the same call already has, made by
   * a replica that won the race). Throws `ApprovalLimitError` past `perUser` waiting.
   */
  async create(
    facts: NewApproval,
    timeoutMs: number,
    perUser: number,
  ): Promise<{ record: ApprovalRecord; created: boolean }> {
    const bindingKey = KEYS.approvalBinding(
      facts.person.id,
      facts.server,
      facts.tool,
      facts.digest,
    );
    const waitingKey = KEYS.approvalsWaitingOf(facts.person.id);
    for (let attempt = 0; attempt < RETRIES; attempt++) {
      const now = this.clock.now();
      const [binding, waiting] = await Promise.all([
        this.store.getEntry<{ id: string }>(bindingKey),
        this.store.getEntry<Waiting>(waitingKey),
      ]);
      if (binding.value) {
        const existing = await this.get(binding.value.id);
        if (existing && existing.status !== "used" && existing.status !== "ended") {
          return { record: existing, created: false };
        }
      }
      const ids = (waiting.value?.ids ?? []).filter((entry) => entry.expiresAt > now);
      if (ids.length >= perUser) throw new ApprovalLimitError(perUser);
      const record: ApprovalRecord = {
        ...facts,
        // 256 bits: the page's address is the only secret between the caller and the approver.
        id: randomBase64Url(32),
        status: "pending",
        requestedAt: now,
        expiresAt: now + timeoutMs,
      };
      const keep = record.expiresAt + KEEP_AFTER_MS;
      const committed = await this.store.commitIfUnchanged(
        [{ key: bindingKey, version: binding.version }, waiting],
        {
          writes: [
            { key: KEYS.approval(record.id), value: record, expiresAt: keep },
            { key: bindingKey, value: { id: record.id }, expiresAt: keep },
            {
              key: waitingKey,
              value: { ids: [...ids, { id: record.id, expiresAt: record.expiresAt }] },
              expiresAt: keep,
            },
          ],
        },
      );
      if (committed) return { record, created: true };
    }
    throw new Error("could not record the approval: the storage kept changing under it");
  }

  /**
   * Moves `id` from one of `from` to `to`, once: the record as written, or undefined when it was
   * not in one of `from` (decided, used or expired already).
   */
  async move(
    id: string,
    from: ApprovalStatus[],
    to: ApprovalStatus,
    extra: Partial<ApprovalRecord> = {},
  ): Promise<ApprovalRecord | undefined> {
    for (let attempt = 0; attempt < RETRIES; attempt++) {
      const entry = await this.store.getEntry<ApprovalRecord>(KEYS.approval(id));
      const record = this.#current(entry.value);
      if (!record || !from.includes(record.status)) return undefined;
      const next: ApprovalRecord = { ...record, ...extra, status: to };
      const writes = [{ key: entry.key, value: next, expiresAt: record.expiresAt + KEEP_AFTER_MS }];
      // A call that is over frees its binding; one decided, its place in the person's count.
      // (Denied and expired keep the binding until the retry has heard so.)
      const over = to === "used" || to === "ended";
      const deletes = over
        ? [KEYS.approvalBinding(record.person.id, record.server, record.tool, record.digest)]
        : [];
      if (await this.store.commitIfUnchanged([entry], { writes, deletes })) {
        if (to !== "pending") await this.#release(record.person.id, id);
        return next;
      }
    }
    throw new Error("could not update the approval: the storage kept changing under it");
  }

  /** Every approval still on record, newest first, at most `limit`. */
  async all(limit = 1_000): Promise<ApprovalRecord[]> {
    const entries = await this.store.list<ApprovalRecord>(KEYS.approvals, limit);
    return entries.flatMap((entry: StoreEntry<ApprovalRecord>) => {
      const record = this.#current(entry.value);
      return record ? [record] : [];
    }).sort((a, b) => b.requestedAt - a.requestedAt);
  }

  /**
   * A record whose time ran out before it was used reads as expired (whoever held it may be
   * gone): an approval is good only within the rule's timeout.
   */
  #current(record: ApprovalRecord | undefined): ApprovalRecord | undefined {
    if (!record) return undefined;
    const open = record.status === "pending" || record.status === "approved";
    if (open && record.expiresAt <= this.clock.now()) {
      return { ...record, status: "expired" };
    }
    return record;
  }

  async #release(person: string, id: string): Promise<void> {
    const key = KEYS.approvalsWaitingOf(person);
    for (let attempt = 0; attempt < RETRIES; attempt++) {
      const entry = await this.store.getEntry<Waiting>(key);
      if (!entry.value) return;
      const ids = entry.value.ids.filter((item) => item.id !== id);
      if (ids.length === entry.value.ids.length) return;
      const writes = [{ key, value: { ids } }];
      if (await this.store.commitIfUnchanged([entry], { writes })) return;
    }
  }
}
