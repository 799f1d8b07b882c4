/**
 * Where each HTTP/1.1 request on a client connection begins and ends, read incrementally from
 * the bytes as they arrive (RFC 9112 §2–§7), so that the TCP front (tcp_front.ts) can time a
 * request's head and body without parsing anything else. It also puts the client's address
 * into each head for the server behind, and refuses the framings that let one request hide
 * inside another (request smuggling): both Content-Length and Transfer-Encoding, conflicting
 * lengths, a transfer coding other than chunked, folded header lines.
 *
 * Bodies pass through untouched; only heads are rewritten (one header line added).
 */

import { concatBytes } from "../core/streams.ts";
import { CR, crlfFrom, digitsOf, findHeadEnd, isName, LF } from "./head_bytes.ts";

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
  /** Set when the bytes cannot be a valid request: answer with this and close. */
  error?: FramingError;
  /** How many request heads were completed by these bytes. */
  heads: number;
}

const COLON = 58;
const encoder = new TextEncoder();
const CONTENT_LENGTH = encoder.encode("content-length");
const TRANSFER_ENCODING = encoder.encode("transfer-encoding");
const PEER_NAME = encoder.encode(PEER_HEADER);
const latin1 = new TextDecoder("latin1");

const enum Chunked {
  /** Hex digits of a chunk's size. */
  Size,
  /** After the size: extensions up to the line's end. */
  SizeRest,
  Data,
  /** The CRLF after a chunk's data. */
  DataEnd,
  /** Trailer lines after the last chunk, until an empty one. */
  Trailer,
}

export class RequestFraming {
  phase: FramingPhase = "idle";
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
    const result: FramingResult = { forward: [], heads: 0 };
    let at = 0;
    while (at < chunk.length && !result.error) {
      if (this.phase === "body") {
        at = this.#body(chunk, at, result);
        continue;
      }
      this.phase = "head";
      at = this.#headPart(chunk, at, result);
    }
    return result;
  }

  /** Collects head bytes; at the head's end, checks it and forwards it with the peer line. */
  #headPart(chunk: Uint8Array, at: number, result: FramingResult): number {
    const end = findHeadEnd(this.#head, chunk, at);
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
    const checked = this.#checkHead(head);
    if ("status" in checked) {
      result.error = checked;
      return chunk.length;
    }
    result.forward.push(checked.head);
    result.heads++;
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
  ): { head: Uint8Array; length: number; chunked: boolean } | FramingError {
    // Empty lines before the request line are allowed and ignored (RFC 9112 §2.2).
    let start = 0;
    while (head[start] === CR && head[start + 1] === LF) start += 2;
    const lineEnd = crlfFrom(head, start);
    let length: number | undefined;
    let transferEncoding: string | undefined;
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
    const withPeer = new Uint8Array(head.length + this.#peerLine.length);
    withPeer.set(head.subarray(0, lineEnd + 2));
    withPeer.set(this.#peerLine, lineEnd + 2);
    withPeer.set(head.subarray(lineEnd + 2), lineEnd + 2 + this.#peerLine.length);
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
        if (this.#chunkSize === 0) this.#chunked = Chunked.DataEnd;
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
          if (this.#lineBytes > 15) return "a chunk size is too large";
          this.#chunkSize = this.#chunkSize * 16 + hexValue(byte);
          return undefined;
        }
        if (this.#lineBytes === 1) return "a chunk size is not hexadecimal";
        this.#chunked = Chunked.SizeRest;
        return this.#chunkByte(byte);
      case Chunked.SizeRest:
        if (byte !== LF) return undefined;
        this.#lineBytes = 0;
        this.#lineEmpty = true;
        this.#chunked = this.#chunkSize === 0 ? Chunked.Trailer : Chunked.Data;
        return undefined;
      case Chunked.DataEnd:
        if (byte === CR) return undefined;
        if (byte !== LF) return "a chunk does not end with CRLF";
        this.#chunked = Chunked.Size;
        this.#chunkSize = 0;
        this.#lineBytes = 0;
        return undefined;
      case Chunked.Trailer:
        if (byte === LF) {
          if (this.#lineEmpty) this.phase = "idle";
          this.#lineEmpty = true;
          this.#lineBytes = 0;
        } else if (byte !== CR) this.#lineEmpty = false;
        return undefined;
    }
    return undefined;
  }
}

function isHex(byte: number): boolean {
  return (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 70) || (byte >= 97 && byte <= 102);
}

function hexValue(byte: number): number {
  return byte <= 57 ? byte - 48 : (byte | 32) - 87;
}
