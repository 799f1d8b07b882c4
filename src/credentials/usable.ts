/**
 * Whether a stored credential can be used, and when not, the `CredentialRequiredError` that
 * tells the person what to do and where (the MCP layer turns it into a URL elicitation or an
 * error naming the page).
 */
import type { UserTokenConfig } from "../config/types.ts";
import { CredentialRequiredError } from "../core/credential_required.ts";
import { parseBearerChallenge } from "./mcp_discovery.ts";
import { type StoredCredential, UNREADABLE } from "./vault.ts";

/** What a person sees for one service on /my/tokens. */
export type CredentialStatus =
  | { state: "missing" }
  | {
    state: "connected";
    source: "oauth" | "manual";
    updatedAt: number;
    /** The last characters of a manual token, when it is long enough to show them safely. */
    ending?: string;
    /** The scopes granted, when the service said (connected accounts). */
    scope?: string;
    /** When the access token expires, when the service said. */
    expiresAt?: number;
  }
  | { state: "reconnect"; reason: string };

/** A service whose backend acts as the person. */
export interface CredentialService {
  name: string;
  userToken: PersonsUserToken;
}

/**
 * A credential the person gives (pasted, or an account connected on /my/tokens); `kind: exchange`
 * is none: the company identity provider issues it per call (idp_exchange.ts).
 */
export type PersonsUserToken = Exclude<UserTokenConfig, { kind: "exchange" }>;

export function givenByPerson(token?: UserTokenConfig): PersonsUserToken | undefined {
  return token && token.kind !== "exchange" ? token : undefined;
}

export interface CredentialNames {
  service: string;
  /** The service's name as people know it. */
  name: string;
  /** Where the person sets or connects it. */
  page: string;
  verb: "add" | "connect";
}

/** The credential when it is usable; else throws the error saying what to do. */
export function usableCredential(
  stored: StoredCredential | typeof UNREADABLE | undefined,
  { service, name, page, verb }: CredentialNames,
): StoredCredential {
  if (stored === undefined) {
    throw new CredentialRequiredError(
      service,
      page,
      `${name} needs your own credential and Gatehouse has none for you: ${verb} it at ${page}, then try again`,
    );
  }
  if (stored === UNREADABLE) {
    throw new CredentialRequiredError(
      service,
      page,
      `your stored ${name} credential can no longer be read (the gateway's secret changed): set it again at ${page}`,
    );
  }
  if (stored.needsReconnect) {
    throw new CredentialRequiredError(
      service,
      page,
      `your ${name} connection has to be renewed (${stored.needsReconnect}): reconnect at ${page}`,
    );
  }
  return stored;
}

/** A server wants scopes the person's connection lacks: they connect again to grant them. */
export function stepUpRequired(
  service: string,
  name: string,
  page: string,
  scopes: string[],
): CredentialRequiredError {
  return new CredentialRequiredError(
    service,
    page,
    `${name} needs more access than your connection gives (${
      scopes.join(" ")
    }): connect again at ${page} to grant it, then try again`,
  );
}

/** A step-up asks for at most this many scopes, each at most MAX_SCOPE_CHARS long. */
export const MAX_STEP_UP_SCOPES = 32;
export const MAX_SCOPE_CHARS = 200;
export const STEP_UP_LIMITS =
  `a step-up asks for 1 to ${MAX_STEP_UP_SCOPES} scope tokens (RFC 6749 §3.3) of at most ${MAX_SCOPE_CHARS} characters`;
/** An RFC 6749 §3.3 scope token: visible ASCII but the double quote and the backslash. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * The scopes to connect again with after a `403 insufficient_scope`: those granted and those
 * the challenge asks for. Undefined when it asks for none, or for what a person could not be
 * asked to grant (a hostile server's prose, thousands of scopes): no step-up then.
 */
export function stepUpScopes(granted: string | undefined, challenge: string | null) {
  const asked = parseBearerChallenge(challenge)?.scope?.split(" ").filter(Boolean) ?? [];
  const acceptable = asked.length > 0 && asked.length <= MAX_STEP_UP_SCOPES &&
    asked.every((scope) => scope.length <= MAX_SCOPE_CHARS && SCOPE_TOKEN.test(scope));
  if (!acceptable) return undefined;
  return [...new Set([...(granted?.split(" ") ?? []), ...asked])].filter(Boolean);
}
