/**
 * GET /authorize (OAuth 2.1 §4.1.1, RFC 8707, RFC 7636) as named checks in order. Until the
 * client and its redirect URI are proven, failures are "page" errors shown to the person and
 * never redirected anywhere; after that they are "redirect" errors sent back to the client.
 */
import { type ClientId, parseClientId } from "../core/ids.ts";
import { isValidCodeChallenge } from "../crypto/pkce.ts";
import type { ClientDirectory } from "./client_directory.ts";
import { type ClientRecord, redirectUriMatches } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import { DEFAULT_SCOPE } from "./metadata.ts";

export interface AuthorizationRequest {
  clientId: ClientId;
  clientName?: string;
  redirectUri: string;
  state: string;
  codeChallenge: string;
  /** Service URIs the token will open. */
  audience: string[];
  scope: string;
}

export type AuthorizeCheck =
  | { ok: true; request: AuthorizationRequest; client: ClientRecord }
  /** Shown to the person: the client or its redirect URI could not be trusted. */
  | { ok: false; kind: "page"; error: OAuthError }
  /**
   * For the proven redirect URI with the state: sent there at once for a client an operator
   * vetted; for any other, shown first (`isOperatorVetted`).
   */
  | {
    ok: false;
    kind: "redirect";
    error: OAuthError;
    redirectUri: string;
    state?: string;
    client: ClientRecord;
  };

const MAX_STATE = 1_024;

function once(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) {
    throw new OAuthError("invalid_request", `the ${name} parameter is repeated`);
  }
  return values[0] === "" ? undefined : values[0];
}

async function checkClient(params: URLSearchParams, clients: ClientDirectory) {
  const raw = once(params, "client_id");
  if (raw === undefined) throw new OAuthError("invalid_request", "client_id is required");
  const clientId = parseClientId(raw);
  const client = clientId ? await clients.find(clientId) : undefined;
  if (!client) {
    throw new OAuthError(
      "invalid_client",
      "this client is not registered with Gatehouse (or its registration expired); register it again",
    );
  }
  return client;
}

function checkRedirectUri(params: URLSearchParams, client: ClientRecord): string {
  const given = once(params, "redirect_uri");
  if (given === undefined) {
    if (client.redirectUris.length === 1) return client.redirectUris[0];
    throw new OAuthError("invalid_request", "redirect_uri is required");
  }
  // Exact string comparison (OAuth 2.1 §2.3.1), any port for loopback: no prefix matching.
  if (!client.redirectUris.some((registered) => redirectUriMatches(registered, given))) {
    throw new OAuthError(
      "invalid_request",
      "redirect_uri is not one the client registered; nothing was sent back to it",
    );
  }
  return given;
}

function checkResponseType(params: URLSearchParams): void {
  const type = once(params, "response_type");
  if (type === undefined) throw new OAuthError("invalid_request", "response_type is required");
  if (type !== "code") {
    throw new OAuthError("unsupported_response_type", "only response_type=code is supported");
  }
}

function checkState(params: URLSearchParams): string {
  const state = once(params, "state");
  if (state === undefined) throw new OAuthError("invalid_request", "state is required");
  if (state.length > MAX_STATE) {
    throw new OAuthError("invalid_request", `state is longer than ${MAX_STATE} characters`);
  }
  return state;
}

function checkPkce(params: URLSearchParams): string {
  const method = once(params, "code_challenge_method");
  const challenge = once(params, "code_challenge");
  if (challenge === undefined) {
    throw new OAuthError("invalid_request", "code_challenge is required (PKCE with S256)");
  }
  if (method !== "S256") {
    throw new OAuthError(
      "invalid_request",
      method === undefined
        ? "code_challenge_method is required and must be S256"
        : `code_challenge_method ${method.slice(0, 20)} is not supported; use S256`,
    );
  }
  if (!isValidCodeChallenge(challenge)) {
    throw new OAuthError(
      "invalid_request",
      "code_challenge must be the 43-character base64url SHA-256 of the verifier",
    );
  }
  return challenge;
}

function checkResources(
  params: URLSearchParams,
  resolveResource: (resource: string) => string | undefined,
): string[] {
  const resources = params.getAll("resource");
  if (resources.length === 0) {
    throw new OAuthError(
      "invalid_target",
      "resource is required: name the service URI the token is for (RFC 8707)",
    );
  }
  const audience = resources.map((resource) => {
    const uri = resolveResource(resource);
    if (!uri) {
      throw new OAuthError(
        "invalid_target",
        `${resource.slice(0, 200)} is not a service of this gateway`,
      );
    }
    return uri;
  });
  return [...new Set(audience)];
}

/**
 * Gatehouse grants one scope, "mcp": the audience decides what a token opens. Requested scopes
 * it does not know are dropped, as RFC 6749 §3.3 allows, and the granted scope is returned.
 */
function checkScope(params: URLSearchParams): string {
  once(params, "scope");
  return DEFAULT_SCOPE;
}

export async function checkAuthorizationRequest(
  params: URLSearchParams,
  deps: { clients: ClientDirectory; resolveResource(resource: string): string | undefined },
): Promise<AuthorizeCheck> {
  let client: ClientRecord;
  let redirectUri: string;
  try {
    client = await checkClient(params, deps.clients);
    redirectUri = checkRedirectUri(params, client);
  } catch (error) {
    if (error instanceof OAuthError) return { ok: false, kind: "page", error };
    throw error;
  }
  const rawState = params.getAll("state");
  const state = rawState.length === 1 && rawState[0].length <= MAX_STATE ? rawState[0] : undefined;
  try {
    checkResponseType(params);
    const checkedState = checkState(params);
    const codeChallenge = checkPkce(params);
    const audience = checkResources(params, deps.resolveResource);
    const scope = checkScope(params);
    return {
      ok: true,
      client,
      request: {
        clientId: client.clientId,
        clientName: client.clientName,
        redirectUri,
        state: checkedState,
        codeChallenge,
        audience,
        scope,
      },
    };
  } catch (error) {
    if (error instanceof OAuthError) {
      return { ok: false, kind: "redirect", error, redirectUri, state, client };
    }
    throw error;
  }
}
