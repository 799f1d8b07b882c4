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

/** An OAuth client id: one we issued at registration, or an https URL (a metadata document). */
export type ClientId = Brand<string, "ClientId">;

const ISSUED_CLIENT_ID = /^gh_[A-Za-z0-9_-]{22,64}$/;

export function parseClientId(text: string | null | undefined): ClientId | undefined {
  if (!text || text.length > 2048) return undefined;
  if (ISSUED_CLIENT_ID.test(text)) return text as ClientId;
  return isClientMetadataUrl(text) ? text as ClientId : undefined;
}

/** MCP 2025-11-25: an https URL with a path names a client metadata document. */
export function isClientMetadataUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "https:" && url.pathname !== "/" && !url.hash && !url.username &&
      !url.password;
  } catch {
    return false;
  }
}
