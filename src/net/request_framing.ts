/**
 * Where each HTTP/1.1 request on a client connection begins and ends, read incrementally from
 * the bytes as they arrive (RFC 9112 §2–§7), so that the TCP front (tcp_front.ts) can time a
 * request's head and body without parsing anything else. It also puts the client's address
 * into each head for the server behind, and refuses the framings that let one request hide
 * inside another (request smuggling): both Content-Length and Transfer-Encoding, conflicting
 * lengths, a transfer coding other than chunked, folded header lines, CONNECT.
 *
 * Bodies pass through untouched; only heads are rewritten (one header line added).
 */

import { concatBytes } from "../core/streams.ts";
import {
  CR,
  crlfFrom,
  digitsOf,
  HeadScanner,
  isHostValue,
  isHttp11,
  isName,
  LF,
} from "./head_bytes.ts";

/** The header the front adds: the address the request came from. Clients may not send it. */
export const PEER_HEADER = "x-gatehouse-peer";

export type FramingPhase =
  /** Between requests: nothing of the next one has arrived. */
  | "idle"
  /** Part of a request head has arrived. */
  | "head"
  /** The head went through; its body is still arriving. */
  | "body";

export interface FramingError {
  status: 400 | 431;
  reason: string;
}

export interface FramingResult {
  /** Bytes to pass on to the server, in order. */
  forward: Uint8Array[];
  /**
   * Set when the bytes cannot be a valid request: answer with this and close. `forward` then
   * holds nothing of the refused request, only what came before it. When `afterAnswers` is set,
   * it ends with whole requests, the last one asking the server to close once it has answered:
   * the refusal comes after those answers.
   */
  error?: FramingError;
  afterAnswers?: boolean;
  /** How many request heads were completed by these bytes. */
  heads: number;
  /** For each of those heads, whether its method is HEAD (its answer has no body). */
  headMethod: boolean[];
}

const COLON = 58;
const encoder = new TextEncoder();
const CLOSE_LINE = encoder.encode("connection: close\r\n");
const CONTENT_LENGTH = encoder.encode("content-length");
const TRANSFER_ENCODING = encoder.encode("transfer-encoding");
const HOST = encoder.encode("host");
const PEER_NAME = encoder.encode(PEER_HEADER);
/**
 * `Deno.serve` (hyper) reads no body after a CONNECT head, whatever its Content-Length or
 * Transfer-Encoding says, and takes those bytes for the next request: the front, which did take
 * them for a body, would have passed on unchecked a request with a forged x-gatehouse-peer.
 * Methods are case-sensitive (RFC 9110 §9.1), and hyper knows CONNECT only so.
 */
const CONNECT = encoder.encode("CONNECT ");
const HEAD = encoder.encode("HEAD ");
const latin1 = new TextDecoder("latin1");

/**
 * Where a chunked body's reading is, outside chunk data. Every line ends with CRLF, as the
 * server behind reads it: a bare LF or CR is refused, so that the front never finds a body's end
 * where the server does not (a trailer line ended by LF alone once would have).
 */
const enum Chunked {
  /** Hex digits of a chunk's size. */
  Size,
  /** After the size: spaces or an extension, up to the CR. */
  SizeRest,
  /** The LF after a size line's CR. */
  SizeLf,
  Data,
  /** The CR after a chunk's data. */
  DataCr,
  /** The LF after it. */
  DataLf,
  /** A trailer line after the last chunk (an empty one ends the body). */
  Trailer,
  /** The LF after a trailer line's CR. */
  TrailerLf,
}

const NOT_CRLF = "a line of a chunked body does not end with CRLF";

export class RequestFraming {
  phase: FramingPhase = "idle";
  readonly #scanner = new HeadScanner();
  #head: Uint8Array[] = [];
  #headBytes = 0;
  /** Body bytes still to come (Content-Length), or -1 while reading a chunked body. */
  #remaining = 0;
  #chunked = Chunked.Size;
  #chunkSize = 0;
  #lineBytes = 0;
  #lineEmpty = true;
  readonly #peerLine: Uint8Array;

  constructor(peer: string, readonly maxHeadBytes = 64 * 1024) {
    this.#peerLine = encoder.encode(`${PEER_HEADER}: ${peer}\r\n`);
  }

  push(chunk: Uint8Array): FramingResult {
    const result: FramingResult = { forward: [], heads: 0, headMethod: [] };
    // Where the last request these bytes completed ends (from the start when they begin
    // between requests), and its head if that came in them too. On a refusal only what comes
    // before it goes on, so that nothing of the refused request reaches the server; a head
    // among them goes on asking the server to close, and the refusal waits for its answer.
    let whole = this.phase === "idle" ? { forward: 0, heads: 0, head: -1 } : undefined;
    let head = -1;
    let at = 0;
    while (at < chunk.length && !result.error) {
      if (this.phase === "body") at = this.#body(chunk, at, result);
      else {
        this.phase = "head";
        const heads = result.heads;
        at = this.#headPart(chunk, at, result);
        if (result.heads > heads) head = result.forward.length - 1;
      }
      if ((this.phase as FramingPhase) === "idle" && !result.error) {
        whole = { forward: result.forward.length, heads: result.heads, head };
      }
    }
    if (result.error && whole) {
      result.forward.length = whole.forward;
      result.heads = whole.heads;
      result.headMethod.length = whole.heads;
      if (whole.head >= 0) {
        result.forward[whole.head] = withCloseLine(result.forward[whole.head]);
        result.afterAnswers = true;
      }
    }
    return result;
  }

  /** Collects head bytes; at the head's end, checks it and forwards it with the peer line. */
  #headPart(chunk: Uint8Array, at: number, result: FramingResult): number {
    const end = this.#scanner.scan(chunk, at);
    if (typeof end === "string") {
      result.error = { status: 400, reason: end };
      return chunk.length;
    }
    if (end < 0) {
      // Kept across reads, so copied: the caller reuses its buffer.
      const part = chunk.slice(at);
      this.#head.push(part);
      this.#headBytes += part.length;
      if (this.#headBytes > this.maxHeadBytes) {
        result.error = { status: 431, reason: "the request head is too large" };
      }
      return chunk.length;
    }
    const part = chunk.subarray(at, end);
    this.#head.push(part);
    this.#headBytes += part.length;
    if (this.#headBytes > this.maxHeadBytes) {
      result.error = { status: 431, reason: "the request head is too large" };
      return chunk.length;
    }
    const head = concatBytes(this.#head, this.#headBytes);
    this.#head = [];
    this.#headBytes = 0;
    const checked = this.#checkHead(head, this.#scanner.emptyLineBytes);
    if ("status" in checked) {
      result.error = checked;
      return chunk.length;
    }
    result.forward.push(checked.head);
    result.heads++;
    result.headMethod.push(startsWith(checked.head, 0, HEAD));
    if (checked.chunked) {
      this.#remaining = -1;
      this.#chunked = Chunked.Size;
      this.#chunkSize = 0;
      this.#lineBytes = 0;
      this.phase = "body";
    } else if (checked.length > 0) {
      this.#remaining = checked.length;
      this.phase = "body";
    } else {
      this.phase = "idle";
    }
    return end;
  }

  /**
   * Reads a head's framing headers; returns the head to forward, peer line added. Byte by byte:
   * only the two framing headers' values are ever made into numbers or text.
   */
  #checkHead(
    head: Uint8Array,
    start: number,
  ): { head: Uint8Array; length: number; chunked: boolean } | FramingError {
    // Empty lines before the request line (`start` bytes) are dropped: the server would ignore
    // them too (RFC 9112 §2.2). Every line ends with CRLF: the scanner refused anything else.
    const lineEnd = crlfFrom(head, start);
    if (startsWith(head, start, CONNECT)) {
      return { status: 400, reason: "CONNECT is not served: the gateway is not a forward proxy" };
    }
    let length: number | undefined;
    let transferEncoding: string | undefined;
    let hosts = 0;
    for (let line = lineEnd + 2; line < head.length - 2;) {
      const next = crlfFrom(head, line);
      const first = head[line];
      if (first === 32 || first === 9) {
        return { status: 400, reason: "folded header lines are not accepted" };
      }
      const colon = head.indexOf(COLON, line);
      if (colon < 0 || colon > next) return { status: 400, reason: "a header line has no colon" };
      if (isName(head, line, colon, PEER_NAME)) {
        return { status: 400, reason: `the ${PEER_HEADER} header is the gateway's own` };
      }
      if (isName(head, line, colon, CONTENT_LENGTH)) {
        const value = digitsOf(head, colon + 1, next);
        if (value === undefined) return { status: 400, reason: "Content-Length is not a number" };
        if (length !== undefined && length !== value) {
          return { status: 400, reason: "conflicting Content-Length headers" };
        }
        length = value;
      } else if (isName(head, line, colon, TRANSFER_ENCODING)) {
        const value = latin1.decode(head.subarray(colon + 1, next)).trim();
        transferEncoding = transferEncoding === undefined ? value : `${transferEncoding},${value}`;
      } else if (isName(head, line, colon, HOST)) {
        // RFC 9112 §3.2: more than one Host, or one that is no host, is a 400.
        if (++hosts > 1) return { status: 400, reason: "the request names more than one Host" };
        if (!isHostValue(head, colon + 1, next)) {
          return { status: 400, reason: "the Host header is not a host name and port" };
        }
      }
      line = next + 2;
    }

    let chunked = false;
    if (transferEncoding !== undefined) {
      if (length !== undefined) {
        return { status: 400, reason: "both Content-Length and Transfer-Encoding" };
      }
      const codings = transferEncoding.toLowerCase().split(",").map((c) => c.trim());
      if (codings.at(-1) !== "chunked" || codings.indexOf("chunked") !== codings.length - 1) {
        return { status: 400, reason: "a request's transfer coding must end with chunked" };
      }
      chunked = true;
    }
    if (hosts === 0 && isHttp11(head, start, lineEnd)) {
      // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400 (Deno.serve took it).
      return { status: 400, reason: "an HTTP/1.1 request must carry a Host header" };
    }
    const requestLine = head.subarray(start, lineEnd + 2);
    const withPeer = new Uint8Array(head.length - start + this.#peerLine.length);
    withPeer.set(requestLine);
    withPeer.set(this.#peerLine, requestLine.length);
    withPeer.set(head.subarray(lineEnd + 2), requestLine.length + this.#peerLine.length);
    return { head: withPeer, length: length ?? 0, chunked };
  }

  /** Passes body bytes on, noting where the body ends. */
  #body(chunk: Uint8Array, at: number, result: FramingResult): number {
    if (this.#remaining >= 0) {
      const take = Math.min(this.#remaining, chunk.length - at);
      result.forward.push(chunk.subarray(at, at + take));
      this.#remaining -= take;
      if (this.#remaining === 0) this.phase = "idle";
      return at + take;
    }
    // Chunked: walk the size lines and trailers byte by byte, each chunk's data in one step.
    const from = at;
    while (at < chunk.length && this.phase === "body") {
      if (this.#chunked === Chunked.Data) {
        const take = Math.min(this.#chunkSize, chunk.length - at);
        at += take;
        this.#chunkSize -= take;
        if (this.#chunkSize === 0) this.#chunked = Chunked.DataCr;
        continue;
      }
      const byte = chunk[at++];
      if (++this.#lineBytes > 4096) {
        result.error = { status: 400, reason: "a chunk line is too long" };
        return chunk.length;
      }
      const error = this.#chunkByte(byte);
      if (error) {
        result.error = { status: 400, reason: error };
        return chunk.length;
      }
    }
    result.forward.push(chunk.subarray(from, at));
    return at;
  }

  /** One byte of a chunked body outside chunk data; a reason when it breaks the framing. */
  #chunkByte(byte: number): string | undefined {
    switch (this.#chunked) {
      case Chunked.Size:
        if (isHex(byte)) {
          // 13 hex digits at most: a size past 2^53 would be counted inexactly here, and
          // Deno.serve, counting exactly, would find the chunk's end elsewhere.
          if (this.#lineBytes > 13) return "a chunk size is too large";
          this.#chunkSize = this.#chunkSize * 16 + hexValue(byte);
          return undefined;
        }
        if (this.#lineBytes === 1) return "a chunk size is not hexadecimal";
        if (byte === CR) this.#chunked = Chunked.SizeLf;
        else if (byte === 59 || byte === 32 || byte === 9) this.#chunked = Chunked.SizeRest;
        else return "a chunk size is not hexadecimal";
        return undefined;
      case Chunked.SizeRest:
        if (byte === CR) this.#chunked = Chunked.SizeLf;
        else if (byte === LF) return NOT_CRLF;
        return undefined;
      case Chunked.SizeLf:
        if (byte !== LF) return NOT_CRLF;
        this.#lineBytes = 0;
        this.#lineEmpty = true;
        this.#chunked = this.#chunkSize === 0 ? Chunked.Trailer : Chunked.Data;
        return undefined;
      case Chunked.DataCr:
        if (byte !== CR) return "a chunk does not end with CRLF";
        this.#chunked = Chunked.DataLf;
        return undefined;
      case Chunked.DataLf:
        if (byte !== LF) return "a chunk does not end with CRLF";
        this.#chunked = Chunked.Size;
        this.#chunkSize = 0;
        this.#lineBytes = 0;
        return undefined;
      case Chunked.Trailer:
        if (byte === CR) this.#chunked = Chunked.TrailerLf;
        else if (byte === LF) return NOT_CRLF;
        else this.#lineEmpty = false;
        return undefined;
      case Chunked.TrailerLf:
        if (byte !== LF) return NOT_CRLF;
        if (this.#lineEmpty) this.phase = "idle";
        this.#chunked = Chunked.Trailer;
        this.#lineEmpty = true;
        this.#lineBytes = 0;
        return undefined;
    }
    return undefined;
  }
}

/** `head` with `connection: close` after its request line: the server closes once it answered. */
function withCloseLine(head: Uint8Array): Uint8Array {
  const afterRequestLine = crlfFrom(head, 0) + 2;
  const closing = new Uint8Array(head.length + CLOSE_LINE.length);
  closing.set(head.subarray(0, afterRequestLine));
  closing.set(CLOSE_LINE, afterRequestLine);
  closing.set(head.subarray(afterRequestLine), afterRequestLine + CLOSE_LINE.length);
  return closing;
}

function startsWith(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (bytes.length - at < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

function isHex(byte: number): boolean {
  return (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 70) || (byte >= 97 && byte <= 102);
}

function hexValue(byte: number): number {
  return byte <= 57 ? byte - 48 : (byte | 32) - 87;
}
