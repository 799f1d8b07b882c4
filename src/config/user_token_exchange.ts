/**
 * `userToken.kind: exchange`: the backend gets a token of the company identity provider,
 * audience-bound to it, for each person (RFC 8693 at the provider's token endpoint, with the
 * person's own provider access token kept from their sign-in). Only the audience, the scopes and
 * an optional resource are configured: the endpoint and Gatehouse's client are `oauth.idp`'s.
 */
import type { Checker, Dict } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import type { ExchangeUserToken } from "./types.ts";

export const EXCHANGE_KEYS = ["audience", "resource"];

/** Keys of `userToken:` that belong to other kinds. */
const NOT_EXCHANGE = ["oauth", "pattern", "clientId", "clientSecret", "authorizationHosts"];

export function parseExchangeUserToken(
  c: Checker,
  spec: Dict,
  at: ConfigPath,
  common: { displayName: string; instructions?: string; remote: boolean },
): ExchangeUserToken {
  if (!common.remote) {
    c.fail(
      [...at, "kind"],
      "kind: exchange is for streamable-http and sse servers",
      "the exchanged token travels as Authorization: Bearer; a stdio server can take {{user.*}} in env instead",
    );
  }
  for (const key of NOT_EXCHANGE) {
    if (spec[key] !== undefined) {
      c.fail(
        [...at, key],
        "is not used with kind: exchange",
        "remove it: the exchange runs at oauth.idp's token endpoint as Gatehouse's client there",
      );
    }
  }
  const audience = c.string(
    spec.audience,
    [...at, "audience"],
    "the audience the company identity provider issues the backend's tokens for, e.g. ledger-api",
  ) ?? "";
  const resource = spec.resource === undefined
    ? undefined
    : c.httpsUrl(spec.resource, [...at, "resource"], "an RFC 8707 resource is an absolute URL");
  return {
    kind: "exchange",
    displayName: common.displayName,
    instructions: common.instructions,
    audience,
    scopes: c.stringList(spec.scopes, [...at, "scopes"]),
    ...(resource !== undefined && { resource }),
  };
}
