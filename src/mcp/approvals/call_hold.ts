/**
 * Holding a tools/call until a person approves it (`approvals:`). `CallHolds` is the gateway's
 * side (one per configuration); `SessionHolds` one session's: every lane reaches a backend
 * through a session (a 2025 session, a 2026 client's link, a legacy SSE stream), so a call is
 * held here once, for everyone, and bound to the session's person. A call no rule names costs
 * one pattern test and is never awaited.
 *
 * A held call gets a pending record (approval_records.ts) and its client is told in the way it
 * can hear: a client that declared URL elicitation (a 2026 client's link always does, and the
 * link turns the request into `input_required`) is sent `elicitation/create` in URL mode and the
 * call waits; any other client gets an error naming the page, and its retry of the same call
 * (same person, server, tool and arguments) waits for, then uses, that approval.
 */
import type { ServerConfig } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import type { ServerName } from "../../core/ids.ts";
import type { Principal } from "../../core/principal.ts";
import { randomHex } from "../../crypto/random.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import {
  errorResponse,
  idKey,
  type RequestId,
  RpcErrorCode,
  type RpcRequest,
} from "../protocol/jsonrpc.ts";
import type { RpcResponse } from "../protocol/jsonrpc.ts";
import { supportsUrlElicitation } from "../protocol/credential_errors.ts";
import { UNASKABLE_META } from "../protocol/gateway_elicitation.ts";
import { isObject, type Json } from "../translate/json_shape.ts";
import {
  approvalEnded,
  approvalRefused,
  approvalRequired,
  approvalUrl,
  elicitationMessage,
} from "./approval_errors.ts";
import type { ApprovalBoard } from "./approval_board.ts";
import {
  ApprovalLimitError,
  type ApprovalRecord,
  type ApprovalRecords,
  OPERATOR_DECIDER,
} from "./approval_records.ts";
import { ApprovalRules, type RuleMatch } from "./approval_rules.ts";
import { argumentsDigest, canonicalArguments, foldedArguments } from "./argument_view.ts";

/** What is said of each approval's life: an audit line and a metric each (app.ts). */
export interface ApprovalEvents {
  requested(record: ApprovalRecord): void;
  approved(record: ApprovalRecord): void;
  denied(record: ApprovalRecord): void;
  expired(record: ApprovalRecord): void;
  executed(record: ApprovalRecord): void;
  ended(record: ApprovalRecord): void;
}

export interface HoldSettings {
  records: ApprovalRecords;
  board: ApprovalBoard;
  clock: Clock;
  /** The gateway's public address: the page is `${baseUrl}/approvals/{id}`. */
  baseUrl: string;
  perUser: number;
  maxMessageBytes: number;
  servers: ReadonlyMap<ServerName, ServerConfig>;
  /** The tool's definition as tool integrity approved it; undefined when not known. */
  definition(server: string, tool: string): Promise<Json | undefined>;
  /** Whether the caller's grant was revoked (it ends their approvals). */
  revoked?(grant: string): boolean;
  events: ApprovalEvents;
  /** Tells a rule's `notify:` webhook that a call waits (never the arguments). */
  notify?(url: string, record: ApprovalRecord, page: string): void;
}

/** What became of a held call: an answer for the client, or an approval to use. */
export type Verdict = { answer: JSONRPCMessage } | { approved: ApprovalRecord } | undefined;

/** How a session's holds reach its client (and list its backend's tools). */
export interface ClientSide {
  deliver(message: JSONRPCMessage, related?: RequestId): void;
  capabilities(): Record<string, unknown>;
  /** One page of the backend's tools/list, asked by the gateway itself. */
  list?(cursor?: string): Promise<RpcResponse>;
}

/** Pages the gateway reads when it lists the tools itself, and how long it trusts that list. */
const MAX_OWN_PAGES = 10;
const LISTED_FRESH_MS = 60_000;

export class CallHolds {
  readonly #rules = new Map<string, ApprovalRules | undefined>();

  constructor(readonly settings: HoldSettings) {}

  /** A session's holds on `server` for `principal`; undefined when no tool of it is held. */
  forSession(
    server: ServerConfig,
    principal: Principal,
  ): ((side: ClientSide) => SessionHolds) | undefined {
    if (!this.#rules.has(server.name)) {
      this.#rules.set(server.name, ApprovalRules.for(server, this.settings.servers));
    }
    const rules = this.#rules.get(server.name);
    return rules && ((side) => new SessionHolds(this.settings, rules, server, principal, side));
  }
}

export class SessionHolds {
  readonly #prefix = `gatehouse-approval-${randomHex(6)}-`;
  #next = 0;
  /** Calls waiting for a decision, by the client's request id. */
  readonly #waiting = new Map<string, AbortController & { approval?: ApprovalRecord }>();
  /** Ids of the elicitations sent, whose answers are the gateway's, not the backend's. */
  readonly #asked = new Set<string>();
  /** The backend's tools as the gateway listed them, by the names this session's client uses. */
  #listed?: { at: number; tools: Promise<Map<string, Json>> };

  constructor(
    private readonly settings: HoldSettings,
    private readonly rules: ApprovalRules,
    private readonly server: ServerConfig,
    private readonly principal: Principal,
    private readonly side: ClientSide,
  ) {}

  /** Undefined (at once) when no rule names the tool; otherwise what became of the call. */
  check(request: RpcRequest): Verdict | Promise<Verdict> {
    const name = request.params?.name;
    if (typeof name !== "string") return undefined;
    const matches = this.rules.matching(name);
    if (matches.length === 0) return undefined;
    return this.#hold(request, name, matches);
  }

  /** The approved call goes now: undefined, or the answer when it can no longer be used. */
  async use(record: ApprovalRecord, id: RequestId): Promise<JSONRPCMessage | undefined> {
    if (record.grant && this.settings.revoked?.(record.grant)) {
      await this.end(record, "the caller's access was revoked");
      return approvalEnded(id, record, "approval_denied", "the caller's access was revoked");
    }
    const used = await this.settings.records.move(record.id, ["approved"], "used");
    if (!used) {
      return approvalRefused(
        id,
        "this approval was already used, or ran out of time: call again to ask for a new one",
      );
    }
    this.settings.events.executed(used);
    return undefined;
  }

  /** The approval ends without the call running (a tool held by tool integrity). */
  async end(record: ApprovalRecord, why: string): Promise<void> {
    const ended = await this.settings.records.move(
      record.id,
      ["pending", "approved", "denied", "expired"],
      "ended",
      { endedBecause: why },
    );
    if (ended) this.settings.events.ended(ended);
  }

  /** Takes the client's answer to an elicitation this sent. */
  ownAnswer(response: RpcResponse): boolean {
    return typeof response.id === "string" && this.#asked.delete(response.id);
  }

  /** The client cancelled request `id`: its wait ends. */
  cancelled(id: RequestId): void {
    this.#waiting.get(idKey(id))?.abort();
  }

  /**
   * The session ended: every wait ends. When it ended because the caller's grant was revoked,
   * so do the approvals it waited on (nobody may use them now).
   */
  close(): void {
    const grant = this.principal.grantId;
    const revoked = grant !== undefined && this.settings.revoked?.(grant) === true;
    for (const controller of this.#waiting.values()) {
      controller.abort();
      if (revoked && controller.approval) {
        void this.end(controller.approval, "the caller's access was revoked").catch(() => {});
      }
    }
  }

  async #hold(request: RpcRequest, name: string, matches: RuleMatch[]): Promise<Verdict> {
    const canonical = canonicalArguments(request.params?.arguments);
    if (canonical.length > this.settings.maxMessageBytes) {
      return {
        answer: approvalRefused(
          request.id,
          "the arguments are larger than limits.maxMessageBytes: no approval can be asked for them",
        ),
      };
    }
    const held = await this.#ruleFor(matches, name);
    if (!held) return undefined;
    const { records } = this.settings;
    const digest = argumentsDigest(canonical);
    const found = await records.forCall(this.principal.id, this.server.name, name, digest);
    // The binding and its record are two reads: a twin call (on another replica, say) may have
    // used the approval in between. A used or ended approval is spent, not denied: this call
    // asks anew, as create() does when it meets one.
    if (found && found.status !== "used" && found.status !== "ended") {
      return await this.#after(request, found, false);
    }
    let made: { record: ApprovalRecord; created: boolean };
    try {
      made = await records.create(
        {
          person: { id: this.principal.id, email: this.principal.email },
          ...(this.principal.clientId && { client: this.principal.clientId }),
          ...(this.principal.grantId && { grant: this.principal.grantId }),
          server: this.server.name,
          tool: name,
          ...(held.match.owner !== this.server.name && { member: held.match.owner }),
          ...(typeof held.definition?.description === "string" &&
            { description: held.definition.description.slice(0, 4_000) }),
          digest,
          shown: foldedArguments(request.params?.arguments, canonical.length),
          by: held.match.rule.by,
        },
        held.match.rule.timeoutMs,
        this.settings.perUser,
      );
    } catch (error) {
      if (error instanceof ApprovalLimitError) {
        return { answer: approvalRefused(request.id, error.message) };
      }
      throw error;
    }
    const { record, created } = made;
    if (created) {
      this.settings.events.requested(record);
      const page = approvalUrl(this.settings.baseUrl, record.id);
      if (held.match.rule.notify) this.settings.notify?.(held.match.rule.notify, record, page);
    }
    return await this.#after(request, record, created);
  }

  /** The first rule that holds the call, and the tool's definition as known. */
  async #ruleFor(matches: RuleMatch[], name: string) {
    for (const match of matches) {
      const definition = await this.#definition(match, name);
      if (!match.rule.destructiveOnly) return { match, definition };
      const annotations = definition?.annotations;
      // A tool whose definition the gateway cannot learn is held: it may be destructive.
      if (!definition || (isObject(annotations) && annotations.destructiveHint === true)) {
        return { match, definition };
      }
    }
    return undefined;
  }

  /**
   * The tool's definition: as tool integrity approved it, else as the backend lists it now
   * (the gateway asks it, under this session, at most once a minute).
   */
  async #definition(match: RuleMatch, name: string): Promise<Json | undefined> {
    const approved = await this.settings.definition(match.owner, match.tool).catch(() => undefined);
    if (approved || !this.side.list) return approved;
    const now = this.settings.clock.now();
    if (!this.#listed || now - this.#listed.at > LISTED_FRESH_MS) {
      this.#listed = { at: now, tools: this.#listAll(this.side.list).catch(() => new Map()) };
    }
    return (await this.#listed.tools).get(name);
  }

  async #listAll(list: (cursor?: string) => Promise<RpcResponse>): Promise<Map<string, Json>> {
    const tools = new Map<string, Json>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_OWN_PAGES; page++) {
      const answer = await list(cursor);
      const listed = isObject(answer.result) && Array.isArray(answer.result.tools)
        ? answer.result.tools
        : [];
      for (const tool of listed) {
        if (isObject(tool) && typeof tool.name === "string") tools.set(tool.name, tool);
      }
      const next = isObject(answer.result) ? answer.result.nextCursor : undefined;
      if (typeof next !== "string") break;
      cursor = next;
    }
    return tools;
  }

  /** What a call with an approval on record comes to. */
  async #after(request: RpcRequest, record: ApprovalRecord, fresh: boolean): Promise<Verdict> {
    switch (record.status) {
      case "approved":
        this.#operatorDecided(record);
        return { approved: record };
      case "pending": {
        const elicit = supportsUrlElicitation(this.side.capabilities());
        if (!elicit && fresh) {
          return {
            answer: approvalRequired(
              request.id,
              record,
              approvalUrl(this.settings.baseUrl, record.id),
            ),
          };
        }
        return await this.#wait(request, record, elicit);
      }
      case "denied":
        this.#operatorDecided(record);
        await this.end(record, record.endedBecause ?? "denied");
        return {
          answer: approvalEnded(request.id, record, "approval_denied", record.endedBecause),
        };
      case "expired":
        if (await this.settings.records.move(record.id, ["expired"], "ended")) {
          this.settings.events.expired(record);
        }
        return { answer: approvalEnded(request.id, record, "approval_expired") };
      default:
        return {
          answer: approvalEnded(request.id, record, "approval_denied", record.endedBecause),
        };
    }
  }

  /**
   * A decision made with `gatehouse approvals` has no page to audit it: the gateway that holds
   * the call does, once (an approval is used once, a denial ends once heard).
   */
  #operatorDecided(record: ApprovalRecord): void {
    if (record.decidedBy !== OPERATOR_DECIDER) return;
    if (record.status === "approved") this.settings.events.approved(record);
    else this.settings.events.denied(record);
  }

  /** Waits for the decision on `record`, sending the client to the page first if it can go. */
  async #wait(request: RpcRequest, record: ApprovalRecord, elicit: boolean): Promise<Verdict> {
    const controller = Object.assign(new AbortController(), { approval: record });
    const key = idKey(request.id);
    this.#waiting.get(key)?.abort();
    this.#waiting.set(key, controller);
    const elicitationId = randomHex(16);
    if (elicit) {
      const id = `${this.#prefix}${++this.#next}`;
      this.#asked.add(id);
      const url = approvalUrl(this.settings.baseUrl, record.id);
      // A 2026 request that did not declare URL elicitation is told the page in this error.
      const unaskable = (approvalRequired(request.id, record, url) as { error: unknown }).error;
      this.side.deliver({
        jsonrpc: "2.0",
        id,
        method: "elicitation/create",
        params: {
          mode: "url",
          elicitationId,
          url,
          message: elicitationMessage(record),
          _meta: { [UNASKABLE_META]: unaskable },
        },
      } as JSONRPCMessage, request.id);
    }
    const decided = await this.settings.board.wait(record.id, controller.signal);
    if (this.#waiting.get(key) === controller) this.#waiting.delete(key);
    if (elicit && decided) {
      this.side.deliver({
        jsonrpc: "2.0",
        method: "notifications/elicitation/complete",
        params: { elicitationId },
      } as JSONRPCMessage, request.id);
    }
    if (!decided) {
      return {
        answer: errorResponse(
          request.id,
          RpcErrorCode.backendError,
          "the call was cancelled while it waited for approval; it did not run",
        ),
      };
    }
    return await this.#after(request, decided, false);
  }
}
