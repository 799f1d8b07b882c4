/**
 * The tool definitions each server's tools were approved with, and the changes waiting for an
 * operator, in the shared storage so every replica (and `gatehouse tools`) sees the same. One
 * record per (server, tool); every decision is a conditional commit on the record as it was
 * read, so two replicas that see one change at once record it (and report it) once. A held
 * definition no list has shown for `limits.heldToolRetention` is pruned: a record of a tool
 * never approved expires from the storage, and a stale held change of an approved tool is no
 * longer read (the approved definition stays).
 */
import type { ToolChanges } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import { KEYS } from "../../store/keys.ts";
import type { Store, StoreWrite } from "../../store/store.ts";
import { describeChanges, keptDefinition } from "./tool_definitions.ts";
import type { Json } from "../translate/json_shape.ts";
import { serialize } from "node:v8";

/** How a definition came to be approved. */
export type ApprovedBy = "first use" | "pin" | "operator" | "toolChanges: allow";

export interface ApprovedDefinition {
  digest: string;
  /** Absent when too large to keep (tool_definitions.ts). */
  definition?: Json;
  at: number;
  by: ApprovedBy;
}

/** A definition seen that is not the approved one: waiting for `gatehouse tools approve`. */
export interface HeldDefinition {
  digest: string;
  definition?: Json;
  /** When it was first seen. */
  at: number;
  /** Field-level description of the change from the approved definition. */
  changes: string[];
  /** An operator looked at it and refused it (the console's Refuse): it stays unserved. */
  refused?: { at: number; by: string };
  /** When a list last showed it (refreshed now and then, see observe); else `at`. */
  seenAt?: number;
}

export interface ToolRecord {
  server: string;
  tool: string;
  approved?: ApprovedDefinition;
  held?: HeldDefinition;
}

/** A change this call recorded (another replica's, or one seen before, is not repeated). */
export interface RecordedChange {
  change: "new" | "changed";
  decision: ToolChanges;
  digest: string;
  previousDigest?: string;
  changes: string[];
}

export interface Observation {
  /** Whether the definition seen may be served. */
  approved: boolean;
  /** The record as it now stands. */
  record: ToolRecord;
  /** Set when this observation recorded a change (report it); unset when nothing new. */
  recorded?: RecordedChange;
}

/** What a server's settings say about a tool first seen or changed. */
export interface ToolRules {
  mode: ToolChanges;
  /** The server's `tools.pinned`, if any. */
  pins?: Record<string, string>;
  /**
   * This is the first list of the server anyone has seen (`claimFirstSight`): its tools are
   * approved on first use. Later, a tool without a record is new.
   */
  firstSight?: boolean;
}

const MAX_ATTEMPTS = 8;
/**
 * What a record may take in the storage, below Deno KV's 64 KiB a value: two kept definitions
 * (approved and held) of 16,000 characters each can pass it when stored (floats and non-Latin-1
 * text take twice their JSON size), and a write that fails makes every list of the server fail.
 */
export const MAX_RECORD_BYTES = 60_000;

/** How long a held definition no list shows is kept, unless configured. */
export const DEFAULT_HELD_RETENTION_MS = 30 * 86_400_000;

export class ToolLedger {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** `limits.heldToolRetention`. */
    private readonly retentionMs = DEFAULT_HELD_RETENTION_MS,
  ) {}

  /** `record` as it stands now: without a held definition past its retention; else undefined. */
  #current(record: ToolRecord | undefined): ToolRecord | undefined {
    const held = record?.held;
    if (!record || !held) return record;
    if (this.clock.now() - (held.seenAt ?? held.at) <= this.retentionMs) return record;
    if (!record.approved) return undefined;
    const { held: _pruned, ...rest } = record;
    return rest;
  }

  /** The write of `record`: one of a tool never approved expires with its held definition. */
  #write(key: StoreWrite["key"], record: ToolRecord): StoreWrite {
    const held = record.held;
    return record.approved || !held
      ? { key, value: record }
      : { key, value: record, expiresAt: (held.seenAt ?? held.at) + this.retentionMs };
  }

  /** Every record of `server`, or of every server. */
  async records(server?: string): Promise<ToolRecord[]> {
    const prefix = server === undefined ? KEYS.toolDefinitions : KEYS.toolDefinitionsOf(server);
    const entries = await this.store.list<ToolRecord>(prefix);
    return entries.flatMap((entry) => {
      const record = this.#current(entry.value);
      return record && (server === undefined || record.server === server) ? [record] : [];
    });
  }

  /**
   * The version of `server`'s epoch, which every write of its records moves: a replica that
   * read them at this version need not read them again.
   */
  async epoch(server: string): Promise<string | null> {
    return (await this.store.getEntry(KEYS.toolEpoch(server))).version;
  }

  #epochWrite(server: string) {
    return { key: KEYS.toolEpoch(server), value: this.clock.now() };
  }

  /** Whether any list of `server` was seen before. */
  async seen(server: string): Promise<boolean> {
    return (await this.store.get(KEYS.toolServerSeen(server))) !== undefined;
  }

  /**
   * Marks `server` as seen; true for the one caller that marked it, whose list is then the one
   * approved on first use.
   */
  async claimFirstSight(server: string): Promise<boolean> {
    const mark = { server, at: this.clock.now() };
    // The storage hands back the very value written when this call wrote it.
    const won = await this.store.setIfAbsent(KEYS.toolServerSeen(server), mark) === mark;
    if (won) await this.store.set(KEYS.toolEpoch(server), mark.at);
    return won;
  }

  async record(server: string, tool: string): Promise<ToolRecord | undefined> {
    return this.#current(await this.store.get<ToolRecord>(KEYS.toolDefinition(server, tool)));
  }

  /**
   * `definition` (digest `digest`) was seen for `tool` of `server`: approved already, approved
   * now (first sight without pins, a matching pin, `toolChanges: allow`), or held.
   */
  async observe(
    server: string,
    tool: string,
    definition: Json,
    digest: string,
    rules: ToolRules,
  ): Promise<Observation> {
    const key = KEYS.toolDefinition(server, tool);
    for (let attempt = 1;; attempt++) {
      const entry = await this.store.getEntry<ToolRecord>(key);
      const record = this.#current(entry.value) ?? { server, tool };
      // A held definition a list shows again is marked seen, at most this often.
      const refreshMs = Math.min(this.retentionMs / 10, 86_400_000);
      const next = decide(record, definition, digest, rules, this.clock.now(), refreshMs);
      if (next.record === record) return { approved: next.approved, record };
      next.record = withinBudget(next.record);
      const written = await this.store.commitIfUnchanged(
        [{ key, version: entry.version }],
        { writes: [this.#write(key, next.record), this.#epochWrite(server)] },
      );
      if (written) return next;
      if (attempt === MAX_ATTEMPTS) {
        throw new Error(`the record of tool "${tool}" of "${server}" kept changing`);
      }
    }
  }

  /**
   * Approves what is held: of `tool`, or of every tool of `server`. Returns what it approved.
   * With `digest` (the start of the one an operator reviewed), only a held definition with that
   * digest is approved: a server that changes it again between the review and the approval
   * does not get the new one approved unseen.
   */
  async approve(server: string, tool?: string, digest?: string): Promise<ToolRecord[]> {
    const candidates = tool === undefined
      ? await this.records(server)
      : [await this.record(server, tool)].filter((record) => record !== undefined);
    const approved: ToolRecord[] = [];
    for (const candidate of candidates) {
      if (!candidate?.held) continue;
      const record = await this.#approveHeld(
        server,
        candidate.tool,
        (held) => digest === undefined || held.digest.startsWith(digest),
      );
      if (record) approved.push(record);
    }
    return approved;
  }

  /**
   * Approves exactly the reviewed definitions (`reviewed`: tool → the full digest shown), each
   * only while it is still the one held: one the server changed since is left held.
   */
  async approveReviewed(
    server: string,
    reviewed: ReadonlyMap<string, string>,
  ): Promise<ToolRecord[]> {
    const approved: ToolRecord[] = [];
    for (const [tool, digest] of reviewed) {
      const record = await this.#approveHeld(server, tool, (held) => held.digest === digest);
      if (record) approved.push(record);
    }
    return approved;
  }

  /** Approves the held definition of `tool` if `accept` takes it; the record written, if any. */
  async #approveHeld(
    server: string,
    tool: string,
    accept: (held: HeldDefinition) => boolean,
  ): Promise<ToolRecord | undefined> {
    const key = KEYS.toolDefinition(server, tool);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const entry = await this.store.getEntry<ToolRecord>(key);
      const current = this.#current(entry.value);
      const held = current?.held;
      if (!current || !held || !accept(held)) return undefined;
      const record: ToolRecord = {
        server,
        tool: current.tool,
        approved: {
          digest: held.digest,
          ...(held.definition && { definition: held.definition }),
          at: this.clock.now(),
          by: "operator",
        },
      };
      const ok = await this.store.commitIfUnchanged([{ key, version: entry.version }], {
        writes: [{ key, value: record }, this.#epochWrite(server)],
      });
      if (ok) return record;
    }
    return undefined;
  }

  /**
   * Marks the held definition of `tool` with this digest as refused by `by`: it stays unserved
   * (as every held one is) and shows as reviewed. False when that definition is no longer held.
   */
  async refuse(server: string, tool: string, digest: string, by: string): Promise<boolean> {
    const key = KEYS.toolDefinition(server, tool);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const entry = await this.store.getEntry<ToolRecord>(key);
      const current = this.#current(entry.value);
      const held = current?.held;
      if (!current || !held || held.digest !== digest) return false;
      const record: ToolRecord = {
        ...current,
        held: { ...held, refused: { at: this.clock.now(), by } },
      };
      const ok = await this.store.commitIfUnchanged([{ key, version: entry.version }], {
        writes: [this.#write(key, record), this.#epochWrite(server)],
      });
      if (ok) return true;
    }
    return false;
  }
}

/** The record after seeing `digest` (the same object when nothing is to be written). */
function decide(
  record: ToolRecord,
  definition: Json,
  digest: string,
  rules: ToolRules,
  now: number,
  refreshMs: number,
): Observation {
  const kept = keptDefinition(definition);
  const approve = (by: ApprovedBy): ToolRecord => ({
    server: record.server,
    tool: record.tool,
    approved: { digest, ...(kept && { definition: kept }), at: now, by },
  });
  if (record.approved?.digest === digest) {
    // Back to what was approved: a change held meanwhile no longer describes the server.
    if (!record.held) return { approved: true, record };
    const { held: _stale, ...rest } = record;
    return { approved: true, record: rest };
  }
  const pin = rules.pins?.[record.tool];
  if (pin === digest) return { approved: true, record: approve("pin") };
  if (!record.approved && !rules.pins && rules.firstSight) {
    return { approved: true, record: approve("first use") };
  }
  const recorded: RecordedChange = {
    change: record.approved ? "changed" : "new",
    decision: rules.mode,
    digest,
    ...(record.approved && { previousDigest: record.approved.digest }),
    changes: record.approved
      ? describeChanges(record.approved.definition, kept)
      : [newToolText(pin, rules.pins)],
  };
  if (rules.mode === "allow") {
    return { approved: true, record: approve("toolChanges: allow"), recorded };
  }
  if (record.held?.digest === digest) {
    // Still listed: kept from pruning, with a write only now and then.
    const seen = record.held.seenAt ?? record.held.at;
    if (now - seen < refreshMs) return { approved: false, record };
    return { approved: false, record: { ...record, held: { ...record.held, seenAt: now } } };
  }
  return {
    approved: false,
    record: {
      ...record,
      held: { digest, ...(kept && { definition: kept }), at: now, changes: recorded.changes },
    },
    recorded,
  };
}

/**
 * `record` as it fits the storage: past MAX_RECORD_BYTES the held definition, then the approved
 * one, are kept by digest only (as a definition too large to keep is), never the write refused.
 */
function withinBudget(record: ToolRecord): ToolRecord {
  if (serialize(record).length <= MAX_RECORD_BYTES) return record;
  if (record.held?.definition) {
    const { definition: _dropped, ...held } = record.held;
    return withinBudget({ ...record, held });
  }
  if (record.approved?.definition) {
    const { definition: _dropped, ...approved } = record.approved;
    return { ...record, approved };
  }
  return record;
}

function newToolText(pin: string | undefined, pins: Record<string, string> | undefined): string {
  if (pin) return "first seen with another digest than its pin";
  if (pins) return "new tool, not among the pins";
  return "new tool (not listed when the server was first seen)";
}
