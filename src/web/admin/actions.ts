/**
 * The console's actions, each a POST whose session, origin and CSRF token console.ts has
 * checked: revoke a grant, disconnect an upstream connection, approve or refuse a held tool.
 * Each goes through the same function the operator CLI calls, so it reaches every replica
 * through the storage, and writes an audit line naming the admin. The answer is a redirect
 * back to the page (303), which says how it went.
 */
import type { Notice } from "../layout.ts";
import type { ConsoleSources } from "./sources.ts";

/** A grant id as Gatehouse issues them; anything else names none. */
const GRANT_ID = /^[A-Za-z0-9_-]{16,64}$/;
const DIGEST = /^[0-9a-f]{64}$/;

export interface ActionResult {
  /** Where the browser goes next: a path under the console, with `notice`. */
  to: string;
  notice: string;
}

export type ActionName = "revoke" | "disconnect" | "approve" | "refuse";

export async function runAction(
  action: ActionName,
  form: URLSearchParams,
  admin: string,
  sources: ConsoleSources,
  knownServer: (name: string) => boolean,
): Promise<ActionResult> {
  const field = (name: string) => (form.get(name) ?? "").slice(0, 100_000);
  const email = field("email").slice(0, 320);
  const back = (notice: string) => ({
    to: `/people?email=${encodeURIComponent(email)}&notice=${notice}`,
    notice,
  });
  if (action === "revoke") {
    const grant = field("grant");
    if (!GRANT_ID.test(grant)) return back("bad_form");
    const revoked = await sources.revokeGrant(grant);
    if (!revoked.length) return back("gone");
    sources.auditAction(admin, "revoke_grant", {
      grant,
      person: revoked[0].email ?? revoked[0].userId ?? "",
      client: revoked[0].clientId ?? "",
    });
    return back("revoked");
  }
  if (action === "disconnect") {
    const user = field("user");
    const server = field("server");
    if (!user || user.length > 512 || !knownServer(server)) return back("bad_form");
    const outcome = await sources.disconnect(user, server);
    sources.auditAction(admin, "disconnect", { person: email || user, server, outcome });
    return back(outcome === "failed" ? "disconnected_unconfirmed" : "disconnected");
  }
  const server = field("server");
  const tool = field("tool");
  const digest = field("digest");
  const tools = (notice: string) => ({ to: `/tools?notice=${notice}`, notice });
  if (!knownServer(server) || !tool || !DIGEST.test(digest)) return tools("bad_form");
  if (action === "approve") {
    if (!(await sources.approveTool(server, tool, digest))) return tools("changed_again");
    sources.auditAction(admin, "approve_tool", { server, tool, digest });
    return tools("approved");
  }
  if (!(await sources.refuseTool(server, tool, digest, admin))) return tools("changed_again");
  sources.auditAction(admin, "refuse_tool", { server, tool, digest });
  return tools("refused");
}

const NOTICES: Record<string, Notice> = {
  revoked: {
    ok: true,
    text:
      "Grant revoked: its client's tokens are refused on every replica within seconds and its sessions end.",
  },
  gone: { ok: false, text: "That grant had already ended; nothing was changed." },
  disconnected: { ok: true, text: "Connection removed: the person must connect again to use it." },
  disconnected_unconfirmed: {
    ok: false,
    text: "Connection removed here, but the service did not confirm the revocation of its tokens.",
  },
  approved: {
    ok: true,
    text:
      "Approved: the gateways list the tool again and its waiting sessions are told the list changed.",
  },
  refused: {
    ok: true,
    text: "Refused: the tool stays out of every list until a new definition is approved.",
  },
  changed_again: {
    ok: false,
    text:
      "Nothing was changed: the held definition is no longer the one you reviewed (the server changed it again). Review it again below.",
  },
  bad_form: { ok: false, text: "That form was not complete; nothing was changed." },
};

export function noticeOf(code: string | null): Notice | undefined {
  return code && Object.hasOwn(NOTICES, code) ? NOTICES[code] : undefined;
}
