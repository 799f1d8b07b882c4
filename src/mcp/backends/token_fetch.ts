/**
 * The fetch under an HTTP backend that acts as the person: the headers that carry
 * `{{user.token}}` are filled from the person's current token on every request (refreshed, or
 * refused once they delete it), and for a remote MCP server (`kind: mcp`) a token it refuses
 * (`401`, or `403 insufficient_scope`) is handed to `rejected`, which returns a token to send
 * the request with once more, or throws to tell the person what to do.
 */
import type { SecretMask } from "../../observability/mask.ts";
import { fillPlaceholders, type PlaceholderValues } from "./placeholders.ts";

/** The person's current service token, looked up again for each HTTP request. */
export type TokenSource = () => Promise<string>;

/** What a backend answered when it refused a token: its status and `WWW-Authenticate`. */
export interface TokenRefusal {
  status: number;
  challenge: string | null;
  /** The token refused was the one `rejected` just returned (the request's second refusal). */
  retried?: boolean;
}

/**
 * Called when a remote MCP server (`kind: mcp`) refused the person's token: returns the token to
 * retry with once (refreshed), undefined to pass the refusal on as it is, or throws
 * `CredentialRequiredError` (connect again, or step up). A second refusal of the same request
 * comes with `retried` and is never retried: a server that refuses every token would otherwise
 * cost a refresh on every call.
 */
export type TokenRejected = (token: string, refusal: TokenRefusal) => Promise<string | undefined>;

const TOKEN_PLACEHOLDER = /\{\{\s*user\.token\s*\}\}/;

/**
 * A fetch that sets the token-bearing headers from the person's current token (and adds a
 * refreshed token to what is masked).
 */
export function freshTokenFetch(
  headers: Record<string, string>,
  user: PlaceholderValues,
  token: TokenSource,
  baseFetch: typeof globalThis.fetch,
  mask: SecretMask,
  rejected?: TokenRejected,
): typeof globalThis.fetch {
  const templated = Object.entries(headers).filter(([, text]) => TOKEN_PLACEHOLDER.test(text));
  const send = (current: string, input: RequestInfo | URL, init?: RequestInit) => {
    const given = init?.headers;
    const values = { ...user, "user.token": current };
    if (given instanceof Headers || Array.isArray(given) || !given) {
      const merged = new Headers(given);
      for (const [name, text] of templated) merged.set(name, fillPlaceholders(text, values));
      return baseFetch(input, { ...init, headers: merged });
    }
    // A plain record, as legacy_http.ts sends (names in lower case, made once per session and
    // shared by its requests): copied rather than turned into a Headers, which costs more.
    const record: Record<string, string> = { ...given };
    for (const [name, text] of templated) {
      record[name.toLowerCase()] = fillPlaceholders(text, values);
    }
    return baseFetch(input, { ...init, headers: record });
  };
  return async (input, init) => {
    const current = await token();
    mask.add(current);
    const response = await send(current, input, init);
    if (!rejected || !refusesToken(response)) return response;
    // Sent again once, with a refreshed token; a streamed body cannot be sent twice.
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== "string") return response;
    const next = await ask(rejected, current, response, false);
    if (next === undefined) return response;
    mask.add(next);
    const again = await send(next, input, init);
    if (!refusesToken(again)) return again;
    await ask(rejected, next, again, true);
    return again;
  };
}

/** Hands a refusal to `rejected`; the answer's body is let go when it will not be passed on. */
async function ask(
  rejected: TokenRejected,
  token: string,
  response: Response,
  retried: boolean,
): Promise<string | undefined> {
  const refusal: TokenRefusal = {
    status: response.status,
    challenge: response.headers.get("www-authenticate"),
  };
  if (retried) refusal.retried = true;
  let next: string | undefined;
  try {
    next = await rejected(token, refusal);
  } catch (error) {
    await response.body?.cancel().catch(() => {});
    throw error;
  }
  if (next !== undefined && !retried) await response.body?.cancel().catch(() => {});
  return next;
}

/** A 401, or a 403 whose challenge says the token lacks a scope (MCP step-up). */
function refusesToken(response: Response): boolean {
  if (response.status === 401) return true;
  return response.status === 403 &&
    /error\s*=\s*"?insufficient_scope\b/i.test(response.headers.get("www-authenticate") ?? "");
}
