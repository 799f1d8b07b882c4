/**
 * Branded identifiers. A raw string becomes one only through its parse function, so a value
 * that reaches code trusting it has been checked once, at the edge.
 */

declare const brand: unique symbol;
type Brand<T, Name extends string> = T & { readonly [brand]: Name };

/** A configured server's name: the first path segment of its URLs. */
export type ServerName = Brand<string, "ServerName">;
/** A client session id as sent in `Mcp-Session-Id` or `?sessionId=`. */
export type SessionId = Brand<string, "SessionId">;
/** A person (or a bearer token standing for one). */
export type UserId = Brand<string, "UserId">;

const SERVER_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** Session ids are 32 hex characters, optionally after a replica prefix and a dot. */
const SESSION_ID = /^(?:[a-z0-9-]{1,32}\.)?[0-9a-f]{32}$/;

export function parseServerName(text: string): ServerName | undefined {
  return SERVER_NAME.test(text) ? text as ServerName : undefined;
}

export function isValidServerName(text: string): boolean {
  return SERVER_NAME.test(text);
}

export function parseSessionId(text: string | null | undefined): SessionId | undefined {
  return text && SESSION_ID.test(text) ? text as SessionId : undefined;
}

export function userId(text: string): UserId {
  return text as UserId;
}
