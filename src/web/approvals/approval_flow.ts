/**
 * `/approvals` and `/approvals/{id}`: a person signed in with the company's identity provider
 * (the SSO session; without one they sign in and come back) sees a held call and, when the
 * rule lets them, approves or denies it. Deciding is a POST carrying the session's CSRF token
 * from this origin; `by: caller` lets only the caller decide, `by: { emails, groups }` only
 * those named and never the caller themself. The decision is one conditional write: two
 * approvers, or an approver and the expiry, cannot both win.
 */
import type { Identity } from "../../core/identity.ts";
import type { Clock } from "../../core/clock.ts";
import type { ApprovalBoard } from "../../mcp/approvals/approval_board.ts";
import type { ApprovalRecord, ApprovalRecords } from "../../mcp/approvals/approval_records.ts";
import type { ApprovalEvents } from "../../mcp/approvals/call_hold.ts";
import { NO_STORE } from "../../oauth/errors.ts";
import type { CurrentIdentity } from "../../oauth/token.ts";
import type { LoginFlow } from "../login_flow.ts";
import { errorPage } from "../pages.ts";
import type { SsoSession, SsoSessions } from "../sso.ts";
import { approvalListPage, approvalPage } from "./approval_pages.ts";

export interface ApprovalFlowDeps {
  issuer: string;
  sso: SsoSessions;
  loginFlow: LoginFlow;
  records: ApprovalRecords;
  board: ApprovalBoard;
  events: ApprovalEvents;
  clock: Clock;
  /**
   * The person as the identity provider states them now when their groups are older than
   * `oauth.groupsMaxAge` (a sign-in outlives them); left out: as signed in.
   */
  currentIdentity?(identity: Identity): Promise<CurrentIdentity>;
  /** The name a client registered (client_name), when it gave one; left out: ids only. */
  clientName?(clientId: string): Promise<string | undefined>;
}

/** Whether `identity` may decide `record`, and if not, why (shown on the page). */
export function mayDecide(
  record: ApprovalRecord,
  identity: Identity,
): { ok: true } | { ok: false; why: string } {
  const isCaller = identity.subject === record.person.id;
  if (record.by === "caller") {
    return isCaller
      ? { ok: true }
      : { ok: false, why: "Only the person who made this call may approve it." };
  }
  const email = identity.emailVerified === false ? undefined : identity.email?.toLowerCase();
  const emails = [email, ...(identity.verifiedEmails ?? []).map((e) => e.toLowerCase())];
  // The caller under another account (another subject with the caller's address) is the caller.
  const callerEmail = record.person.email?.toLowerCase();
  if (isCaller || (callerEmail !== undefined && emails.includes(callerEmail))) {
    return {
      ok: false,
      why:
        "Someone else must approve this call: the gateway's rule names who, and never the caller.",
    };
  }
  const named = emails.some((e) =>
    e !== undefined && record.by !== "caller" &&
    record.by.emails.includes(e)
  );
  const grouped = (identity.groups ?? []).some((g) =>
    record.by !== "caller" && record.by.groups.includes(g)
  );
  return named || grouped
    ? { ok: true }
    : { ok: false, why: "You are not among the people this call's rule names to approve it." };
}

export class ApprovalFlow {
  readonly #basePath: string;
  readonly #origin: string;

  constructor(private readonly deps: ApprovalFlowDeps) {
    const url = new URL(deps.issuer);
    this.#basePath = url.pathname.replace(/\/$/, "");
    this.#origin = url.origin;
  }

  /** GET /approvals */
  async list(request: Request): Promise<Response> {
    const session = await this.deps.sso.fromRequest(request);
    if (!session) return await this.deps.loginFlow.signIn(`${this.#basePath}/approvals`);
    const all = await this.deps.records.all();
    const identity = await this.#identity(session);
    const mine = all.filter((r) => r.person.id === identity.subject && r.status === "pending");
    const forMe = all.filter((r) => r.status === "pending" && mayDecide(r, identity).ok);
    return await approvalListPage(mine, forMe, await this.#context(session, [...mine, ...forMe]));
  }

  /** GET /approvals/{id} */
  async page(request: Request, id: string): Promise<Response> {
    // Checked before it goes anywhere (the sign-in's return path above all): an id is what
    // approval_records.ts makes, 32 random bytes in base64url, and nothing else names one.
    if (!APPROVAL_ID.test(id)) return await unknown();
    const session = await this.deps.sso.fromRequest(request);
    if (!session) return await this.deps.loginFlow.signIn(`${this.#basePath}/approvals/${id}`);
    const record = await this.deps.records.get(id);
    const identity = await this.#identity(session);
    if (!record || !this.#mayView(record, identity)) return await unknown();
    const notice = new URL(request.url).searchParams.get("notice");
    const ctx = await this.#context(session, [record]);
    ctx.notice = notice === "approved"
      ? { ok: true, text: "Approved. The call runs now, once, with exactly these arguments." }
      : notice === "denied"
      ? { ok: true, text: "Denied. The call did not run, and the client has been told." }
      : undefined;
    return await approvalPage(record, mayDecide(record, identity), ctx);
  }

  /** POST /approvals/{id}: csrf, decision (approve | deny). */
  async decide(request: Request, id: string, form: URLSearchParams): Promise<Response> {
    if (!APPROVAL_ID.test(id)) return await unknown();
    if (!this.#sameOrigin(request)) {
      return await errorPage(
        403,
        "Not sent from this site",
        "Open the approval page and decide there; nothing was changed.",
      );
    }
    const session = await this.deps.sso.fromRequest(request);
    if (!session) {
      return await errorPage(
        401,
        "Your sign-in has expired",
        "Open the approval page again to sign in; nothing was changed.",
      );
    }
    if (!(await this.deps.sso.checkCsrf(session, form.get("csrf")))) {
      return await errorPage(
        403,
        "This form has expired",
        "Reload the page and try again; nothing was changed.",
      );
    }
    const decision = form.get("decision");
    if (decision !== "approve" && decision !== "deny") {
      return await errorPage(400, "No decision", "Press Approve or Deny; nothing was changed.");
    }
    const record = await this.deps.records.get(id);
    const identity = await this.#identity(session);
    if (!record || !this.#mayView(record, identity)) return await unknown();
    const allowed = mayDecide(record, identity);
    if (!allowed.ok) {
      return await errorPage(403, "Not yours to decide", `${allowed.why} Nothing was changed.`);
    }
    const who = session.identity.email ?? session.identity.subject;
    const decided = await this.deps.records.move(
      id,
      ["pending"],
      decision === "approve" ? "approved" : "denied",
      { decidedBy: who, decidedAt: this.deps.clock.now() },
    );
    if (!decided) {
      return await errorPage(
        409,
        "Already decided",
        "This call was decided, used or expired meanwhile; reload the page to see what came of it.",
      );
    }
    this.deps.board.decided(decided);
    if (decision === "approve") this.deps.events.approved(decided);
    else this.deps.events.denied(decided);
    return new Response(null, {
      status: 303,
      headers: {
        location: `${this.#basePath}/approvals/${id}?notice=${
          decision === "approve" ? "approved" : "denied"
        }`,
        ...NO_STORE,
      },
    });
  }

  /**
   * Who the signed-in person is now: groups older than `oauth.groupsMaxAge` are read again, so
   * someone taken out of an approvers' group stops deciding (and seeing) at once, not when their
   * sign-in ends. A person the provider no longer knows keeps only what is theirs as the caller.
   */
  async #identity(session: SsoSession): Promise<Identity> {
    const current = await this.deps.currentIdentity?.(session.identity);
    if (!current) return session.identity;
    if (!current.ok) return { subject: session.identity.subject };
    // Kept, so the provider is asked again only once these groups are old in their turn.
    if (current.identity !== session.identity) {
      await this.deps.sso.describe(session, current.identity);
    }
    return current.identity;
  }

  /** The caller and whoever may decide see the page; others learn nothing, not even that it exists. */
  #mayView(record: ApprovalRecord, identity: Identity): boolean {
    return identity.subject === record.person.id || mayDecide(record, identity).ok;
  }

  /**
   * A browser's POST from another site is refused whatever it carries (CSRF's second lock).
   * Browsers say where a request comes from in Sec-Fetch-Site; Origin is "null" from these
   * pages (their referrer policy is no-referrer), so it counts only when it names a site.
   */
  #sameOrigin(request: Request): boolean {
    const site = request.headers.get("sec-fetch-site");
    if (site !== null) return site === "same-origin";
    const origin = request.headers.get("origin");
    return origin === null || origin === "null" || origin === this.#origin;
  }

  async #context(session: SsoSession, shown: ApprovalRecord[]) {
    const { identity } = session;
    return {
      person: identity.email ?? identity.name ?? identity.subject,
      basePath: this.#basePath,
      csrf: await this.deps.sso.csrfToken(session),
      now: this.deps.clock.now(),
      clientNames: await this.#clientNames(shown),
    } as Parameters<typeof approvalPage>[2];
  }

  /**
   * The registered names of the clients `records` came through. A name is a hint beside the id
   * (the client chose it); one that cannot be read leaves the id alone on the page.
   */
  async #clientNames(records: ApprovalRecord[]): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    const lookup = this.deps.clientName;
    if (!lookup) return names;
    const ids = [...new Set(records.flatMap((r) => r.client === undefined ? [] : [r.client]))];
    await Promise.all(ids.map(async (id) => {
      const name = await lookup(id).catch(() => undefined);
      if (name) names.set(id, name);
    }));
    return names;
  }
}

/** The shape of every approval id (randomBase64Url(32) in mcp/approvals/approval_records.ts). */
const APPROVAL_ID = /^[A-Za-z0-9_-]{43}$/;

async function unknown(): Promise<Response> {
  return await errorPage(
    404,
    "No such approval",
    "It may have ended, or it is not yours to see. Open Approvals for what waits for you.",
  );
}
