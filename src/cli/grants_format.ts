/** How `gatehouse grants` prints grants: a table for people, a JSON array for scripts. */
import { printable } from "./terminal_text.ts";
import { type GrantView, serverNames } from "../oauth/grant_admin.ts";

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

function minute(ms: number | undefined): string {
  return ms === undefined ? "-" : new Date(ms).toISOString().slice(0, 16).replace("T", " ");
}

/** One JSON array; times as ISO 8601, null when not known (grants opened by older versions). */
export function grantsJson(grants: GrantView[], issuer: string): string {
  return JSON.stringify(
    grants.map((grant) => ({
      grant: grant.id,
      userId: grant.userId ?? null,
      email: grant.email ?? null,
      clientId: grant.clientId ?? null,
      clientName: grant.clientName ?? null,
      servers: serverNames(grant.audience, issuer),
      grantedAt: iso(grant.grantedAt),
      lastUsedAt: iso(grant.lastUsedAt),
      expiresAt: iso(grant.expiresAt),
      issuedVia: grant.issuedVia,
    })),
    null,
    2,
  );
}

const COLUMNS = [
  "GRANT",
  "USER",
  "CLIENT",
  "SERVERS",
  "VIA",
  "GRANTED (UTC)",
  "LAST USED (UTC)",
];
/** How the VIA column names the way a grant was issued. */
const VIA = { "authorization_code": "browser", "id-jag": "id-jag" } as const;
/** A column wider than this is cut with "…": client names and ids are chosen by others. */
const MAX_WIDTH = 40;

/** Aligned columns, one grant a line; control characters in names are shown as "?". */
export function grantsTable(grants: GrantView[], issuer: string): string {
  const rows = grants.map((grant) =>
    [
      grant.id,
      grant.email ?? grant.userId ?? "-",
      grant.clientName ? `${grant.clientName} (${grant.clientId ?? "?"})` : grant.clientId ?? "-",
      serverNames(grant.audience, issuer).join(",") || "-",
      VIA[grant.issuedVia],
      minute(grant.grantedAt),
      minute(grant.lastUsedAt),
    ].map(cell)
  );
  const widths = COLUMNS.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => row[i].length))
  );
  return [COLUMNS, ...rows]
    .map((row) => row.map((text, i) => text.padEnd(widths[i])).join("  ").trimEnd())
    .join("\n");
}

function cell(text: string): string {
  const shown = printable(text);
  return shown.length > MAX_WIDTH ? `${shown.slice(0, MAX_WIDTH - 1)}…` : shown;
}
