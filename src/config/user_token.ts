/**
 * A server's `requiresUserToken` and `userToken:` settings: how each person supplies their own
 * credential for a backend that acts as them, either by connecting their account over OAuth or
 * by pasting a token.
 */
import { Secret } from "../core/secret.ts";
import { Checker, describe, type Dict } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import type { TokenAuthMethod, UserTokenConfig } from "./types.ts";
import { MCP_KEYS, parseMcpUserToken } from "./user_token_mcp.ts";
import { EXCHANGE_KEYS, parseExchangeUserToken } from "./user_token_exchange.ts";

const USER_TOKEN_KEYS = [
  "kind",
  "displayName",
  "instructions",
  "pattern",
  "oauth",
  ...MCP_KEYS,
  ...EXCHANGE_KEYS,
];
const OAUTH_KEYS = [
  "issuer",
  "authorizationUrl",
  "tokenUrl",
  "revocationUrl",
  "clientId",
  "clientSecret",
  "scopes",
  "tokenAuthMethod",
];
const AUTH_METHODS: TokenAuthMethod[] = ["client_secret_basic", "client_secret_post", "none"];
const TOKEN_PLACEHOLDER = /\{\{\s*user\.token\s*\}\}/;

/** An optional https URL: tokens travel to it. */
function serviceUrl(c: Checker, value: unknown, path: ConfigPath): string | undefined {
  return value === undefined
    ? undefined
    : c.httpsUrl(value, path, "tokens travel here; http is accepted for localhost only");
}

/**
 * The resolved `userToken`, or undefined when the server does not act as the person.
 * `texts` are the server's args/env/headers/url, where `{{user.token}}` must appear.
 */
export function parseUserToken(
  c: Checker,
  raw: Dict,
  path: ConfigPath,
  name: string,
  texts: string[],
  oauthConfigured: boolean,
  remote: boolean,
): UserTokenConfig | undefined {
  const requires = c.boolean(raw.requiresUserToken, [...path, "requiresUserToken"], false);
  const usesToken = texts.some((text) => TOKEN_PLACEHOLDER.test(text));
  if (!requires) {
    if (raw.userToken !== undefined) {
      c.fail(
        [...path, "userToken"],
        "is set but requiresUserToken is not",
        "add requiresUserToken: true",
      );
    }
    if (usesToken) {
      c.fail(
        path,
        "uses {{user.token}} without requiresUserToken: true",
        "say requiresUserToken: true and describe the credential under userToken:",
      );
    }
    return undefined;
  }
  if (!oauthConfigured) {
    c.fail(
      [...path, "requiresUserToken"],
      "needs oauth: configured",
      "people give their credentials on browser pages after signing in with the company login",
    );
  }
  if (raw.public === true) {
    c.fail(
      [...path, "public"],
      "a public server cannot act as a person",
      "remove public: true; people sign in to use their own credential",
    );
  }
  if (!usesToken) {
    c.fail(
      path,
      "requires a user token but never passes it to the backend",
      'use {{user.token}} in headers, url, env or args, e.g. headers: { Authorization: "Bearer {{user.token}}" }',
    );
  }
  const at = [...path, "userToken"];
  const spec = c.object(raw.userToken, at, USER_TOKEN_KEYS) ?? {};
  const kind = spec.kind ?? "manual";
  const displayName = spec.displayName === undefined
    ? name
    : c.string(spec.displayName, [...at, "displayName"]) ?? name;
  const instructions = c.optionalString(spec.instructions, [...at, "instructions"]);
  if (kind === "exchange") {
    return parseExchangeUserToken(c, spec, at, { displayName, instructions, remote });
  }
  for (const key of EXCHANGE_KEYS) {
    if (spec[key] !== undefined) {
      c.fail([...at, key], "is only used with kind: exchange", "remove it, or say kind: exchange");
    }
  }
  if (kind !== "mcp") {
    for (const key of MCP_KEYS) {
      if (spec[key] !== undefined) {
        c.fail([...at, key], "is only used with kind: mcp", "remove it, or say kind: mcp");
      }
    }
  }
  if (kind === "mcp") {
    return parseMcpUserToken(c, spec, at, { displayName, instructions, remote });
  }
  if (kind === "manual") {
    if (spec.oauth !== undefined) {
      c.fail([...at, "oauth"], "is only used with kind: oauth", "remove it, or say kind: oauth");
    }
    const pattern = c.optionalString(spec.pattern, [...at, "pattern"]);
    if (pattern !== undefined) {
      try {
        new RegExp(pattern);
      } catch (error) {
        c.fail([...at, "pattern"], `not a regular expression: ${(error as Error).message}`);
      }
    }
    return { kind, displayName, instructions, pattern };
  }
  if (kind !== "oauth") {
    c.fail(
      [...at, "kind"],
      `unknown kind ${describe(kind)}`,
      "one of: mcp, oauth, manual, exchange",
    );
    return undefined;
  }
  if (spec.pattern !== undefined) {
    c.fail([...at, "pattern"], "is only used with kind: manual", "remove it");
  }
  const oauthAt = [...at, "oauth"];
  if (spec.oauth === undefined) {
    return c.fail(oauthAt, "is required with kind: oauth", "give issuer:, or the endpoint URLs");
  }
  const o = c.object(spec.oauth, oauthAt, OAUTH_KEYS) ?? {};
  const issuer = serviceUrl(c, o.issuer, [...oauthAt, "issuer"]);
  const authorizationUrl = serviceUrl(c, o.authorizationUrl, [...oauthAt, "authorizationUrl"]);
  const tokenUrl = serviceUrl(c, o.tokenUrl, [...oauthAt, "tokenUrl"]);
  if (issuer === undefined) {
    if (o.issuer === undefined && o.authorizationUrl === undefined) {
      c.fail(
        oauthAt,
        "needs either issuer or authorizationUrl and tokenUrl",
        "issuer: when the service publishes OAuth metadata, else both endpoint URLs",
      );
    } else if (o.authorizationUrl !== undefined && o.tokenUrl === undefined) {
      c.fail([...oauthAt, "tokenUrl"], "is required with authorizationUrl");
    } else if (o.tokenUrl !== undefined && o.authorizationUrl === undefined) {
      c.fail([...oauthAt, "authorizationUrl"], "is required with tokenUrl");
    }
  } else if (
    issuer !== undefined && (o.authorizationUrl !== undefined || o.tokenUrl !== undefined)
  ) {
    c.fail(
      oauthAt,
      "gives both issuer and endpoint URLs",
      "keep issuer (the endpoints are discovered) or the URLs, not both",
    );
  }
  const method = o.tokenAuthMethod;
  if (method !== undefined && !(AUTH_METHODS as unknown[]).includes(method)) {
    c.fail(
      [...oauthAt, "tokenAuthMethod"],
      `unknown method ${describe(method)}`,
      `one of: ${AUTH_METHODS.join(", ")}`,
    );
  }
  const secret = c.optionalString(o.clientSecret, [...oauthAt, "clientSecret"]);
  if (method !== undefined && method !== "none" && secret === undefined) {
    c.fail(
      [...oauthAt, "clientSecret"],
      `is required with tokenAuthMethod ${method}`,
      "e.g. clientSecret: ${LINEAR_CLIENT_SECRET}",
    );
  }
  return {
    kind,
    displayName,
    instructions,
    issuer,
    authorizationUrl,
    tokenUrl,
    revocationUrl: serviceUrl(c, o.revocationUrl, [...oauthAt, "revocationUrl"]),
    clientId:
      c.string(o.clientId, [...oauthAt, "clientId"], "the client id the service gave you") ??
        "",
    clientSecret: secret === undefined ? undefined : new Secret(secret),
    scopes: c.stringList(o.scopes, [...oauthAt, "scopes"]),
    tokenAuthMethod: method as TokenAuthMethod | undefined,
  };
}
