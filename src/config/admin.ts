/**
 * `admin:`: the operator console (src/web/admin/). Who may open it (people who signed in with
 * the company identity provider and are listed by address or group), where it lives, and how
 * long an idle console session lasts.
 */
import { isLoopbackHost } from "../core/loopback.ts";
import { parseListen } from "./addresses.ts";
import { Checker, describe } from "./checker.ts";
import type { AdminConfig } from "./admin_config.ts";
import type { OAuthConfig, ServerConfig } from "./types.ts";

export const DEFAULT_ADMIN_PATH = "/admin";
export const DEFAULT_ADMIN_IDLE_MS = 30 * 60_000;

/** Paths of the gateway's own pages and endpoints, which the console may not sit under. */
const TAKEN = new Set([
  "authorize",
  "oauth",
  "my",
  "logout",
  "register",
  "token",
  "revoke",
  "clients",
  "health",
  "ready",
  "metrics",
  ".well-known",
]);

export function parseAdmin(
  c: Checker,
  value: unknown,
  oauth: OAuthConfig | undefined,
  servers: ReadonlyMap<string, ServerConfig>,
): AdminConfig | undefined {
  if (value === undefined || value === null) return undefined;
  const raw = c.object(value, ["admin"], [
    "emails",
    "groups",
    "path",
    "idleTimeout",
    "listen",
    "url",
  ]);
  if (!raw) return undefined;
  const emails = c.stringList(raw.emails, ["admin", "emails"]).map((email) => email.toLowerCase());
  const groups = c.stringList(raw.groups, ["admin", "groups"]);
  if (emails.length === 0 && groups.length === 0) {
    c.fail(
      ["admin"],
      "names no administrator",
      "list the people who may open the console under admin.emails, or their group under admin.groups",
    );
  }
  if (!oauth) {
    c.fail(
      ["admin"],
      "needs oauth: configured: administrators sign in with the company identity provider",
      "add an oauth: section with your identity provider, or remove admin:",
    );
  }
  if (groups.length && oauth && oauth.idp.provider !== "github" && !oauth.idp.groupsClaim) {
    c.fail(
      ["admin", "groups"],
      "cannot be checked: the identity provider's sign-ins carry no groups",
      "set oauth.idp.groupsClaim to the claim that carries them, or list admin.emails instead",
    );
  }
  const path = parsePath(c, raw.path, servers);
  return {
    emails,
    groups,
    path,
    idleTimeoutMs: c.duration(raw.idleTimeout, ["admin", "idleTimeout"], DEFAULT_ADMIN_IDLE_MS),
    ...parseOwnListener(c, raw.listen, raw.url),
  };
}

/** `admin.listen` and the URL it is reached at (by default, its own address over http). */
function parseOwnListener(
  c: Checker,
  listenValue: unknown,
  urlValue: unknown,
): { listen?: { hostname: string; port: number }; url?: string } {
  if (listenValue === undefined) {
    if (urlValue !== undefined) {
      c.fail(["admin", "url"], "is only used with admin.listen", "remove it, or set admin.listen");
    }
    return {};
  }
  const listen = parseListen(c, listenValue, ["admin", "listen"]);
  const given = urlValue === undefined ? undefined : c.string(urlValue, ["admin", "url"]);
  if (given === undefined) {
    if (!isLoopbackHost(listen.hostname) && listen.hostname !== "::1") {
      c.fail(
        ["admin", "url"],
        `is needed: the console listens on ${listen.hostname}, which is not a loopback address`,
        "set admin.url to the https URL people open the console at",
      );
    }
    const host = listen.hostname.includes(":") ? `[${listen.hostname}]` : listen.hostname;
    return { listen, url: `http://${host}:${listen.port}` };
  }
  let url: URL | undefined;
  try {
    url = new URL(given);
  } catch { /* said below */ }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.search || url.hash) {
    c.fail(
      ["admin", "url"],
      `is not a URL without query: ${describe(given)}`,
      "e.g. https://ops.example.com",
    );
    return { listen };
  }
  return { listen, url: url.href.replace(/\/$/, "") };
}

function parsePath(
  c: Checker,
  value: unknown,
  servers: ReadonlyMap<string, ServerConfig>,
): string {
  if (value === undefined) return DEFAULT_ADMIN_PATH;
  const path = c.string(value, ["admin", "path"]);
  if (path === undefined) return DEFAULT_ADMIN_PATH;
  const trimmed = path.replace(/\/+$/, "");
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(trimmed)) {
    c.fail(
      ["admin", "path"],
      `is not a path of plain segments: ${describe(path)}`,
      "e.g. /admin or /ops/console",
    );
    return DEFAULT_ADMIN_PATH;
  }
  const first = trimmed.split("/")[1];
  if (servers.has(first)) {
    c.fail(
      ["admin", "path"],
      `starts with "${first}", the name of a server: its MCP endpoints live under /${first}/`,
      "choose another path, e.g. /admin",
    );
  } else if (TAKEN.has(first)) {
    c.fail(
      ["admin", "path"],
      `starts with "${first}", which the gateway's own pages use`,
      "choose another path, e.g. /admin",
    );
  }
  return trimmed;
}
