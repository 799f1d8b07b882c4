/**
 * OAuth clients: dynamic registration (RFC 7591) validated into a `ClientRecord`, and the
 * metadata a client may see about itself. Pure: storage happens in `client_directory.ts`.
 */
import type { ClientId } from "../core/ids.ts";
import { isLoopbackHttp } from "../core/loopback.ts";
import { OAuthError } from "./errors.ts";
import { JWT_BEARER } from "./metadata.ts";

export type TokenEndpointAuthMethod =
  | "none"
  | "client_secret_post"
  | "client_secret_basic"
  | "private_key_jwt";

export interface ClientRecord {
  clientId: ClientId;
  /** SHA-256 (base64url) of the secret of a confidential client; never the secret itself. */
  clientSecretHash?: string;
  /** private_key_jwt (metadata-document clients): the keys as published, or where. */
  jwks?: unknown;
  jwksUri?: string;
  redirectUris: string[];
  grantTypes: string[];
  responseTypes: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  clientName?: string;
  clientUri?: string;
  logoUri?: string;
  scope?: string;
  /** Seconds since the epoch. */
  issuedAt: number;
  /** Milliseconds; set while the client has never obtained a token, then cleared. */
  expiresAt?: number;
  /**
   * "registered" through /register, described by a metadata document at its URL, or
   * "configured" by the operator (`oauth.clients`).
   */
  source: "registered" | "metadata-document" | "configured";
}

/**
 * Whether an operator vetted the client, so that /authorize may send errors to its redirect URI
 * without showing them first. Anyone can register a client (dynamic registration) or describe
 * one at a URL (a metadata document) whose only redirect URI is an attacker's page: an automatic
 * error redirect to it would make the gateway's domain an open redirector (RFC 9700 §4.11.2).
 * None of today's sources is vetted; a client the operator's configuration names would be.
 */
export function isOperatorVetted(client: ClientRecord): boolean {
  const unvetted: ClientRecord["source"][] = ["registered", "metadata-document"];
  return !unvetted.includes(client.source);
}

export type RegistrationDraft = Omit<ClientRecord, "clientId" | "issuedAt" | "source">;

const AUTH_METHODS: TokenEndpointAuthMethod[] = [
  "none",
  "client_secret_post",
  "client_secret_basic",
];
const GRANT_TYPES = ["authorization_code", "refresh_token", JWT_BEARER];
const MAX_REDIRECT_URIS = 10;
const MAX_TEXT = 512;

const invalid = (description: string) => new OAuthError("invalid_client_metadata", description);

/**
 * Why a redirect URI is unacceptable, or undefined when it is fine. `customSchemes` lists the
 * private-use schemes of native apps the operator admits (RFC 8252 §7.1, e.g. "cursor").
 */
/**
 * Whether `given` is the registered redirect URI `registered`: the exact string (OAuth 2.1
 * §2.3.1), except that a loopback http URI may name any port (RFC 8252 §7.3, OAuth 2.1
 * §8.4.2), since a native app gets its port from the system when it starts listening.
 */
export function redirectUriMatches(registered: string, given: string): boolean {
  if (registered === given) return true;
  let a: URL, b: URL;
  try {
    a = new URL(registered);
    b = new URL(given);
  } catch {
    return false;
  }
  if (!isLoopbackHttp(a) || !isLoopbackHttp(b)) return false;
  // Everything but the port, compared as written (hostname included: 127.0.0.1 ≠ localhost).
  return a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search &&
    a.username === "" && b.username === "" && a.hash === "" && b.hash === "" &&
    withoutPort(registered) === withoutPort(given);
}

/** The URI text with its port removed, so that nothing but the port may differ. */
function withoutPort(text: string): string {
  return text.replace(/^(http:\/\/(?:\[[^\]]+\]|[^/:?#]+)):\d+/i, "$1");
}

export function redirectUriProblem(text: string, customSchemes: string[] = []): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${text.slice(0, 100)}" is not an absolute URL`;
  }
  if (text.includes("#")) return `"${text.slice(0, 100)}" has a fragment, which is not allowed`;
  if (url.username || url.password) return "a redirect URI must not carry credentials";
  if (url.protocol === "https:") return undefined;
  if (isLoopbackHttp(url)) return undefined;
  if (customSchemes.includes(url.protocol.slice(0, -1))) return undefined;
  return `"${text.slice(0, 100)}" must use https, or http on a loopback address`;
}

function optionalText(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value.length > MAX_TEXT) {
    throw invalid(`${field} must be a string of at most ${MAX_TEXT} characters`);
  }
  return value;
}

function optionalHttpsUrl(body: Record<string, unknown>, field: string): string | undefined {
  const value = optionalText(body, field);
  if (value === undefined) return undefined;
  try {
    if (new URL(value).protocol === "https:") return value;
  } catch { /* reported below */ }
  throw invalid(`${field} must be an https URL`);
}

function stringArray(body: Record<string, unknown>, field: string, fallback: string[]): string[] {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
    throw invalid(`${field} must be an array of strings`);
  }
  return [...new Set(value as string[])];
}

/** Validates registration metadata (RFC 7591 §2) into what will be stored. */
export function validateRegistration(
  body: unknown,
  customSchemes: string[] = [],
  /** Methods admitted besides AUTH_METHODS (private_key_jwt, for metadata documents). */
  extraMethods: TokenEndpointAuthMethod[] = [],
): RegistrationDraft {
  if (!body || typeof body !== "object" || Array.isArray(body)) {
    throw invalid("the registration request must be a JSON object");
  }
  const raw = body as Record<string, unknown>;
  const grantTypes = stringArray(raw, "grant_types", ["authorization_code"]);
  const unsupportedGrant = grantTypes.find((grant) => !GRANT_TYPES.includes(grant));
  if (unsupportedGrant) {
    throw invalid(`grant type "${unsupportedGrant.slice(0, 60)}" is not supported`);
  }
  if (!grantTypes.includes("authorization_code") && !grantTypes.includes(JWT_BEARER)) {
    throw invalid(`grant_types must include authorization_code or ${JWT_BEARER}`);
  }
  const method = raw.token_endpoint_auth_method ?? "client_secret_basic";
  const methods = [...AUTH_METHODS, ...extraMethods];
  if (!methods.includes(method as TokenEndpointAuthMethod)) {
    throw invalid(`token_endpoint_auth_method must be one of ${methods.join(", ")}`);
  }
  if (grantTypes.includes(JWT_BEARER) && method === "none") {
    throw invalid(
      `a public client (token_endpoint_auth_method "none") cannot use ${JWT_BEARER}; register with client_secret_basic or client_secret_post`,
    );
  }
  const redirectUris = stringArray(raw, "redirect_uris", []);
  // A client that only presents assertions is never redirected to.
  if (redirectUris.length === 0 && grantTypes.includes("authorization_code")) {
    throw new OAuthError("invalid_redirect_uri", "redirect_uris must list at least one URI");
  }
  if (redirectUris.length > MAX_REDIRECT_URIS) {
    throw new OAuthError(
      "invalid_redirect_uri",
      `redirect_uris may list at most ${MAX_REDIRECT_URIS} URIs`,
    );
  }
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri, customSchemes);
    if (problem) throw new OAuthError("invalid_redirect_uri", problem);
  }
  const responseTypes = stringArray(
    raw,
    "response_types",
    grantTypes.includes("authorization_code") ? ["code"] : [],
  );
  const wantedResponses = grantTypes.includes("authorization_code") ? ["code"] : [];
  if (responseTypes.join(" ") !== wantedResponses.join(" ")) {
    throw invalid(`response_types must be ${JSON.stringify(wantedResponses)}`);
  }
  return {
    redirectUris,
    grantTypes,
    responseTypes,
    tokenEndpointAuthMethod: method as TokenEndpointAuthMethod,
    clientName: optionalText(raw, "client_name"),
    clientUri: optionalHttpsUrl(raw, "client_uri"),
    logoUri: optionalHttpsUrl(raw, "logo_uri"),
    scope: optionalText(raw, "scope"),
  };
}

/** The client's metadata as a client sees it: never a secret or its hash. */
export function publicClientMetadata(client: ClientRecord): Record<string, unknown> {
  return {
    client_id: client.clientId,
    client_id_issued_at: client.issuedAt,
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: client.responseTypes,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    ...(client.clientName !== undefined && { client_name: client.clientName }),
    ...(client.clientUri !== undefined && { client_uri: client.clientUri }),
    ...(client.logoUri !== undefined && { logo_uri: client.logoUri }),
    ...(client.scope !== undefined && { scope: client.scope }),
  };
}
