/**
 * A server's `serviceAuths:`, the credentials of scripts and CI: static bearer tokens, or an
 * HTTP Basic username and password for clients that can send nothing else. Each may name the
 * groups its callers count as members of, for `access:` and tool rules.
 */
import { Secret } from "../core/secret.ts";
import { type Checker, describe } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import { type GroupSpelling, parseGroupList } from "./server_access.ts";
import type { ServiceAuth } from "./types.ts";

const KEYS = {
  bearer: ["type", "tokens", "groups"],
  basic: ["type", "username", "password", "groups"],
};
/** RFC 7617: the user-id holds no colon; visible ASCII keeps it readable in logs and audits. */
const USERNAME = /^[\x21-\x39\x3b-\x7e]{1,64}$/;

export function parseServiceAuths(
  c: Checker,
  value: unknown,
  path: ConfigPath,
  spelling: GroupSpelling,
): ServiceAuth[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    c.fail(
      path,
      `expected a list, got ${describe(value)}`,
      "write [{ type: bearer, tokens: [...] }]",
    );
    return [];
  }
  const auths: ServiceAuth[] = [];
  // A Basic caller is named by its username, so two entries of one server cannot share one.
  const usernames = new Set<string>();
  value.forEach((item, i) => {
    const at = [...path, i];
    const type = (item as Record<string, unknown> | null)?.type;
    if (type !== "bearer" && type !== "basic") {
      if (c.object(item, at, "any")) {
        c.fail(
          [...at, "type"],
          `unsupported auth type ${describe(type)}`,
          'use "bearer" or "basic"',
        );
      }
      return;
    }
    const raw = c.object(item, at, KEYS[type]);
    if (!raw) return;
    const groups = parseGroupList(c, raw.groups, [...at, "groups"], spelling);
    if (type === "bearer") {
      auths.push({ type, tokens: parseTokens(c, raw.tokens, [...at, "tokens"]), groups });
      return;
    }
    const username = c.string(raw.username, [...at, "username"], "e.g. username: ci") ?? "";
    if (usernames.has(username)) {
      c.fail([...at, "username"], `"${username}" is used twice`, "give each its own");
    }
    usernames.add(username);
    if (username && !USERNAME.test(username)) {
      c.fail(
        [...at, "username"],
        `not a usable username: ${describe(username)}`,
        "use up to 64 visible ASCII characters without ':' or spaces (HTTP Basic cannot carry a ':' in it)",
      );
    }
    const password = c.string(raw.password, [...at, "password"], "e.g. password: ${CI_PASSWORD}");
    if (password !== undefined && password.length < 16) {
      c.fail(
        [...at, "password"],
        "is shorter than 16 characters",
        "generate one, e.g. openssl rand -base64 24, and give it from the environment",
      );
    }
    auths.push({ type, username, password: new Secret(password ?? ""), groups });
  });
  return auths;
}

function parseTokens(c: Checker, value: unknown, path: ConfigPath): Secret[] {
  const tokens = c.stringList(value, path);
  if (tokens.length === 0) {
    c.fail(path, "needs at least one token", 'e.g. tokens: ["${MY_TOKEN}"]');
  }
  tokens.forEach((token, j) => {
    if (token.trim() !== token || token.length === 0) {
      c.fail([...path, j], "a token must be non-empty, without surrounding spaces");
    }
  });
  return tokens.map((t) => new Secret(t));
}
