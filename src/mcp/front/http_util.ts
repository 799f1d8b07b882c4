/** Small HTTP helpers the front transports share: bodies with a size cap, Accept, replies. */
import { GatehouseError } from "../../core/errors.ts";
import { readAllCapped } from "../../core/streams.ts";
import { errorBody, type RequestId } from "../protocol/jsonrpc.ts";

export class BodyTooLargeError extends GatehouseError<"body_too_large"> {
  constructor(message: string) {
    super("body_too_large", message);
  }
}

/** One of each for every body: a decode without `stream` starts afresh, so they can be shared. */
const lenientUtf8 = new TextDecoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A body's text; a `TypeError` if it is not UTF-8. Decoded leniently first (V8's own decoder,
 * five times faster than the strict one: 7 against 35 µs for 64 KiB): only a text with U+FFFD
 * in it, where invalid bytes would have been replaced (or the client sent one), is decoded
 * again strictly to tell which.
 */
function utf8Text(bytes: Uint8Array): string {
  const text = lenientUtf8.decode(bytes);
  return text.includes("\uFFFD") ? strictUtf8.decode(bytes) : text;
}

/** Reads a request body as text, refusing more than `maxBytes` without reading it all. */
export async function readBodyLimited(request: Request, maxBytes: number): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) {
    await request.body?.cancel().catch(() => {});
    throw new BodyTooLargeError(`the body is larger than ${maxBytes} bytes`);
  }
  // A declared length is enforced by the HTTP server's framing, so such a body is read in one
  // go (the common case, and much cheaper than a stream); chunked bodies are counted as read.
  const all = Number.isFinite(declared)
    ? new Uint8Array(await request.arrayBuffer())
    : await readAllCapped(request.body, maxBytes);
  if (!all) throw new BodyTooLargeError(`the body is larger than ${maxBytes} bytes`);
  return utf8Text(all);
}

/** Accept headers seen lately and what they admit: clients send the same one every time. */
const acceptCache = new Map<string, boolean>();

/** True when the Accept header admits `type` (directly, by `type/*`, or by `*\/*`). */
export function accepts(header: string | null, type: string): boolean {
  if (!header) return false;
  const key = `${type} ${header}`;
  let admits = acceptCache.get(key);
  if (admits === undefined) {
    if (acceptCache.size >= 256) acceptCache.clear();
    acceptCache.set(key, admits = parseAccepts(header, type));
  }
  return admits;
}

function parseAccepts(header: string, type: string): boolean {
  const [major] = type.split("/");
  return header.split(",").some((part) => {
    const [range, ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    if (q && Number(q.slice(2)) === 0) return false;
    return range === type || range === `${major}/*` || range === "*/*";
  });
}

export function jsonResponse(
  body: unknown,
  status = 200,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** An HTTP error carrying a JSON-RPC error body, as MCP clients expect on MCP endpoints. */
export function rpcError(
  status: number,
  code: number,
  message: string,
  id: RequestId | null = null,
  headers: Record<string, string> = {},
): Response {
  return jsonResponse(errorBody(id, code, message), status, headers);
}

/** An HTTP error in the gateway's own shape: `{ error, error_description }`. */
export function httpError(
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): Response {
  return jsonResponse({ error, error_description: description }, status, headers);
}
