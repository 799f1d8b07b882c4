/**
 * `oauth.idJag` (which issuers' ID-JAGs the token endpoint takes, and how long one may live)
 * and `oauth.clients` (confidential clients the operator configures, with their secret from the
 * environment): the enterprise-managed authorization part of `oauth:`.
 */
import { Secret } from "../core/secret.ts";
import { type Checker, describe } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import type { ConfiguredClient, IdJagConfig } from "./id_jag_types.ts";
import type { IdpConfig } from "./types.ts";

export const ID_JAG_DEFAULT_MAX_LIFETIME_MS = 10 * 60_000;
/** An id the operator picks: a name, never the `gh_` of registered clients or a URL. */
const CLIENT_ID = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;
const MIN_SECRET_LENGTH = 32;

/** `idJag: true` trusts the sign-in provider; `idJag: { issuers, maxLifetime }` names issuers. */
export function parseIdJag(c: Checker, value: unknown, idp: IdpConfig): IdJagConfig | undefined {
  const path: ConfigPath = ["oauth", "idJag"];
  if (value === undefined || value === null || value === false) return undefined;
  if (value === true) {
    if (idp.issuer === undefined) {
      c.fail(
        path,
        `provider ${idp.provider} issues no ID-JAGs`,
        "name the issuers instead: idJag: { issuers: [https://login.example.com] }",
      );
      return undefined;
    }
    return { issuers: [idp.issuer], maxLifetimeMs: ID_JAG_DEFAULT_MAX_LIFETIME_MS };
  }
  const raw = c.object(value, path, ["issuers", "maxLifetime"]);
  if (!raw) return undefined;
  const listed = c.stringList(raw.issuers, [...path, "issuers"]);
  const issuers = listed.map((issuer, i) =>
    c.httpsUrl(issuer, [...path, "issuers", i], "the issuer exactly as its ID-JAGs' iss says")
  ).filter((issuer): issuer is string => issuer !== undefined);
  if (listed.length === 0 && (raw.issuers === undefined || Array.isArray(raw.issuers))) {
    c.fail(
      [...path, "issuers"],
      "lists no issuer",
      "e.g. issuers: [https://login.example.com], or say idJag: true to trust oauth.idp's issuer",
    );
  }
  const maxLifetimeMs = c.duration(
    raw.maxLifetime,
    [...path, "maxLifetime"],
    ID_JAG_DEFAULT_MAX_LIFETIME_MS,
  );
  if (maxLifetimeMs > 60 * 60_000) {
    c.fail(
      [...path, "maxLifetime"],
      "is longer than 1h",
      "ID-JAGs are short-lived; 5m to 10m is usual",
    );
  }
  return { issuers: [...new Set(issuers)], maxLifetimeMs };
}

/** `oauth.clients`: confidential clients for the jwt-bearer grant. */
export function parseConfiguredClients(c: Checker, value: unknown): ConfiguredClient[] {
  const path: ConfigPath = ["oauth", "clients"];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    c.fail(
      path,
      "must be a list of clients",
      "e.g. - { id: chat-app, secret: ${CHAT_APP_SECRET} }",
    );
    return [];
  }
  const seen = new Set<string>();
  const clients: ConfiguredClient[] = [];
  value.forEach((item, i) => {
    const at: ConfigPath = [...path, i];
    const raw = c.object(item, at, ["id", "secret", "name", "authMethod"]);
    if (!raw) return;
    const id = c.string(raw.id, [...at, "id"], "a name such as chat-app");
    if (id !== undefined && (!CLIENT_ID.test(id) || id.startsWith("gh_"))) {
      c.fail(
        [...at, "id"],
        `not a client id: ${describe(id)}`,
        "letters, digits, . _ -; at most 64; not starting with gh_",
      );
    } else if (id !== undefined && seen.has(id)) {
      c.fail([...at, "id"], `${describe(id)} is listed twice`, "give each client its own id");
    }
    if (id !== undefined) seen.add(id);
    const secret = c.string(raw.secret, [...at, "secret"], "e.g. ${CHAT_APP_SECRET}");
    if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) {
      c.fail(
        [...at, "secret"],
        `is shorter than ${MIN_SECRET_LENGTH} characters`,
        "generate one: openssl rand -base64 32",
      );
    }
    const method = raw.authMethod ?? "client_secret_basic";
    if (method !== "client_secret_basic" && method !== "client_secret_post") {
      c.fail(
        [...at, "authMethod"],
        `unknown method ${describe(method)}`,
        "client_secret_basic or client_secret_post",
      );
    }
    clients.push({
      id: id ?? "",
      secret: new Secret(secret ?? ""),
      name: c.optionalString(raw.name, [...at, "name"]),
      authMethod: method === "client_secret_post" ? "client_secret_post" : "client_secret_basic",
    });
  });
  return clients;
}
