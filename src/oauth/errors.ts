/**
 * The closed set of OAuth errors and the only two ways they are rendered: JSON (token and
 * registration endpoints, `Cache-Control: no-store`) or a redirect to a redirect URI that has
 * already been proven to belong to the client.
 */
import { GatehouseError } from "../core/errors.ts";

export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "invalid_target"
  | "access_denied"
  | "server_error"
  | "temporarily_unavailable"
  | "invalid_client_metadata"
  | "invalid_redirect_uri"
  | "unsupported_token_type";

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  access_denied: 403,
  server_error: 500,
  temporarily_unavailable: 503,
  invalid_client_metadata: 400,
  invalid_redirect_uri: 400,
  unsupported_token_type: 400,
};

export class OAuthError extends GatehouseError<OAuthErrorCode> {
  /**
   * `description` is what the client (or the person's page) is told; `logDetail`, when given,
   * goes to the log only: what the gateway saw that a stranger must not learn from its answer
   * (the address a host resolves to, a connect error).
   */
  constructor(
    code: OAuthErrorCode,
    readonly description: string,
    readonly logDetail?: string,
  ) {
    super(code, `${code}: ${description}`);
  }

  get status(): number {
    return STATUS[this.code];
  }
}

export const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" } as const;

/** JSON error body; `invalid_client` carries a Basic challenge as RFC 6749 §5.2 asks. */
export function oauthErrorJson(error: OAuthError, basicChallenge = false): Response {
  const headers: Record<string, string> = { ...NO_STORE, "content-type": "application/json" };
  if (error.code === "invalid_client" && basicChallenge) {
    headers["www-authenticate"] = 'Basic realm="gatehouse"';
  }
  return new Response(
    JSON.stringify({ error: error.code, error_description: error.description }),
    { status: error.status, headers },
  );
}

/**
 * The error sent back to the client's redirect URI, with `state` and `iss` (RFC 9207). Call it
 * only once the client and its redirect URI are proven; before that, render a page instead.
 */
export function oauthErrorRedirect(
  redirectUri: string,
  error: OAuthError,
  state: string | undefined,
  issuer: string,
): Response {
  const location = oauthErrorLocation(redirectUri, error, state, issuer);
  return new Response(null, { status: 302, headers: { location, ...NO_STORE } });
}

/** Where `oauthErrorRedirect` sends the browser: for a page that lets the person go on there. */
export function oauthErrorLocation(
  redirectUri: string,
  error: OAuthError,
  state: string | undefined,
  issuer: string,
): string {
  const url = new URL(redirectUri);
  url.searchParams.set("error", error.code);
  url.searchParams.set("error_description", error.description);
  if (state !== undefined) url.searchParams.set("state", state);
  url.searchParams.set("iss", issuer);
  return url.href;
}
