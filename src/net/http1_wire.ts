/**
 * HTTP/1.1 on the wire, as the backend client writes requests and reads answers: pure functions
 * over strings and bytes, with no socket in sight (http1_connection.ts feeds them).
 */

const encoder = new TextEncoder();

/** A header name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value may not break the request's framing. */
const UNSAFE_VALUE = /[\r\n\0]/;

/** An answer's status line and the headers that decide how its body is read. */
export interface Head {
  status: number;
  statusText: string;
  headers: [string, string][];
  length?: number;
  chunked: boolean;
  keepAlive: boolean;
  contentType: string;
  encoding: string;
}

/** A request's header lines, checked, with whether they name a user agent and what they accept. */
interface HeaderLines {
  text: string;
  hasUserAgent: boolean;
  hasAccept: boolean;
}

/**
 * Header lines of frozen records, by record: the gateway's transports freeze the headers they
 * send with every request of a session (legacy_http.ts), so those are checked and written out
 * once per session instead of once per request. A frozen record cannot change under the cache.
 */
const frozenLines = new WeakMap<object, HeaderLines>();

function headerLines(headers: HeadersInit | undefined): HeaderLines {
  const lines: HeaderLines = { text: "", hasUserAgent: false, hasAccept: false };
  const add = (name: string, value: string) => {
    if (!TOKEN.test(name)) throw new TypeError(`invalid header name ${JSON.stringify(name)}`);
    if (UNSAFE_VALUE.test(value)) throw new TypeError(`invalid value for header ${name}`);
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "content-length" || lower === "connection") return;
    if (lower === "transfer-encoding") return;
    if (lower === "user-agent") lines.hasUserAgent = true;
    if (lower === "accept") lines.hasAccept = true;
    lines.text += `${name}: ${value.trim()}\r\n`;
  };
  if (headers instanceof Headers) headers.forEach((value, name) => add(name, value));
  else if (Array.isArray(headers)) { for (const [name, value] of headers) add(name, value); }
  else if (headers) {
    const record = headers as Record<string, string>;
    const frozen = Object.isFrozen(record);
    const known = frozen ? frozenLines.get(record) : undefined;
    if (known) return known;
    for (const name in record) add(name, record[name]);
    if (frozen) frozenLines.set(record, lines);
  }
  return lines;
}

/** The request's bytes, head and body together; throws before anything is sent if unsafe. */
export function encodeRequest(
  method: string,
  url: URL,
  init: RequestInit | undefined,
  userAgent: string,
): Uint8Array {
  if (!TOKEN.test(method)) throw new TypeError(`invalid method ${JSON.stringify(method)}`);
  const lines = headerLines(init?.headers);
  let head =
    `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n${lines.text}`;
  if (!lines.hasUserAgent) head += `user-agent: ${userAgent}\r\n`;
  if (!lines.hasAccept) head += "accept: */*\r\n";
  const raw = init?.body;
  if (typeof raw === "string" && raw.length <= COUNTED_BODY_CHARS) {
    // The usual case (a short JSON-RPC message): one encode for head and body together.
    return encoder.encode(`${head}content-length: ${utf8Length(raw)}\r\n\r\n${raw}`);
  }
  const body = bodyBytes(raw);
  if (body || method === "POST" || method === "PUT" || method === "PATCH") {
    head += `content-length: ${body?.length ?? 0}\r\n`;
  }
  const headBytes = encoder.encode(head + "\r\n");
  if (!body?.length) return headBytes;
  const packet = new Uint8Array(headBytes.length + body.length);
  packet.set(headBytes);
  packet.set(body, headBytes.length);
  return packet;
}

/**
 * Up to this many characters a string body's UTF-8 size is counted in JavaScript and the request
 * encoded in one piece; a longer one is encoded on its own and copied after the head. Counting
 * costs about 2 ns a character, so a 64 KiB body cost 150 µs counted against 17 encoded apart,
 * while a short one costs 1 µs counted against 3 encoded apart.
 */
const COUNTED_BODY_CHARS = 1024;

/** The UTF-8 size of a string, without encoding it. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2; // a surrogate pair: 2 UTF-16 units, 4 bytes
        i++;
      } else bytes += 2; // a lone surrogate becomes U+FFFD, 3 bytes
    } else bytes += 2;
  }
  return bytes;
}

function bodyBytes(body: BodyInit | null | undefined): Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return encoder.encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof URLSearchParams) return encoder.encode(body.toString());
  throw new TypeError("this client sends string or byte bodies only");
}

/** Where the head in `buffer[start, end)` ends (after its empty line: CRLF CRLF, or LF LF), or -1. */
export function findHeadEnd(buffer: Uint8Array, start: number, end: number): number {
  const window = buffer.subarray(0, end);
  for (let lf = window.indexOf(10, start); lf >= 0; lf = window.indexOf(10, lf + 1)) {
    if (lf + 1 < end && buffer[lf + 1] === 10) return lf + 2;
    if (lf + 2 < end && buffer[lf + 1] === 13 && buffer[lf + 2] === 10) return lf + 3;
  }
  return -1;
}

/** Reads a status line and headers; refuses what a careful client must not guess at. */
export function parseHead(text: string): Head {
  const lines = text.split(/\r?\n/);
  const status = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0]);
  if (!status) throw new TypeError("the backend did not answer with HTTP/1.x");
  const headers: [string, string][] = [];
  let length: number | undefined;
  let chunked = false;
  let keepAlive = status[1] === "1";
  let contentType = "";
  let encoding = "";
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (!line) continue;
    const colon = line.indexOf(":");
    if (colon <= 0 || line[0] === " " || line[0] === "\t") {
      throw new TypeError("the backend's answer has a malformed header");
    }
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    // What `Headers` would refuse is refused here, where the answer is read (http1_response.ts
    // makes its `Headers` only when asked, and must not throw then).
    if (!TOKEN.test(name) || value.includes("\0")) {
      throw new TypeError("the backend's answer has a malformed header");
    }
    switch (name) {
      case "content-length": {
        const n = Number(value);
        if (!/^\d+$/.test(value) || (length !== undefined && length !== n)) {
          throw new TypeError("the backend's answer has an invalid Content-Length");
        }
        length = n;
        break;
      }
      case "transfer-encoding":
        chunked = value.toLowerCase().split(",").map((s) => s.trim()).includes("chunked");
        break;
      case "connection": {
        const tokens = value.toLowerCase();
        if (tokens.includes("close")) keepAlive = false;
        else if (tokens.includes("keep-alive")) keepAlive = true;
        break;
      }
      case "content-type":
        contentType = value.toLowerCase();
        break;
      case "content-encoding":
        encoding = value.toLowerCase() === "identity" ? "" : value.toLowerCase();
        break;
    }
    headers.push([name, value]);
  }
  // With both, chunked framing wins and the length is ignored (RFC 9112 §6.3).
  if (chunked) length = undefined;
  if (!chunked && length === undefined) keepAlive = false;
  return {
    status: Number(status[2]),
    statusText: status[3] ?? "",
    headers,
    length,
    chunked,
    keepAlive,
    contentType,
    encoding,
  };
}
