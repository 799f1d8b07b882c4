/**
 * Where each answer the server writes on a client connection ends (RFC 9112 §6.3), read as the
 * bytes pass, so that the TCP front knows when a connection is between requests: every request
 * it forwarded has been answered whole. Then, at the cap, it may close the connection that has
 * been idle longest (as nginx does), and a client that half-closed after its requests is closed
 * once they are answered. Only the framing is read; the server behind (`Deno.serve`) writes heads
 * with CRLF line ends and one framing header at most.
 *
 * An answer read until the server closes (no length, not chunked) or a switch of protocols makes
 * the rest opaque: such a connection is never taken for one between requests.
 */
import { concatBytes } from "../core/streams.ts";
import { CR, LF } from "./head_bytes.ts";

const enum Body {
  /** Reading an answer's head. */
  Head,
  /** Content-Length bytes. */
  Length,
  /** Hex digits of a chunk's size, then anything up to the CR of its line. */
  Size,
  SizeRest,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  /** Trailer lines after the last chunk; an empty one ends the answer. */
  Trailer,
  TrailerLf,
}

/** An answer head longer than this is not read as one: the rest is opaque. */
const MAX_HEAD = 64 * 1024;
const latin1 = new TextDecoder("latin1");
/** CR LF CR LF as four bytes of one number. */
const HEAD_END = ((CR << 24) | (LF << 16) | (CR << 8) | LF) >>> 0;

export class ResponseFraming {
  /** Answers owed, oldest first: whether the request was a HEAD (its answer has no body). */
  readonly #owed: boolean[] = [];
  /** The rest of the connection is not framed answers (an upgrade, an answer read to its end). */
  opaque = false;
  #state = Body.Head;
  /** The head's bytes so far, and its last four bytes as one number (CRLFCRLF ends it). */
  #head: Uint8Array[] = [];
  #headBytes = 0;
  #tail = 0;
  #remaining = 0;
  #lineEmpty = true;

  /** A request went to the server; `isHead` when its method is HEAD. */
  expect(isHead: boolean): void {
    this.#owed.push(isHead);
  }

  /** Requests forwarded whose answers have not passed whole. */
  get pending(): number {
    return this.#owed.length;
  }

  /** Whether part of an answer has passed and the rest has not. */
  get midAnswer(): boolean {
    return this.opaque || this.#state !== Body.Head || this.#headBytes > 0 || this.#tail !== 0;
  }

  push(bytes: Uint8Array): void {
    let at = 0;
    while (at < bytes.length && !this.opaque) {
      switch (this.#state) {
        case Body.Head:
          at = this.#headPart(bytes, at);
          break;
        case Body.Length: {
          const take = Math.min(this.#remaining, bytes.length - at);
          at += take;
          this.#remaining -= take;
          if (this.#remaining === 0) this.#answered();
          break;
        }
        case Body.Data: {
          const take = Math.min(this.#remaining, bytes.length - at);
          at += take;
          this.#remaining -= take;
          if (this.#remaining === 0) this.#state = Body.DataCr;
          break;
        }
        default:
          this.#chunkByte(bytes[at++]);
      }
    }
  }

  #headPart(bytes: Uint8Array, at: number): number {
    const start = at;
    while (at < bytes.length) {
      this.#tail = ((this.#tail << 8) | bytes[at++]) >>> 0;
      if (this.#tail !== HEAD_END) continue;
      // Copied: the caller reuses its buffer.
      this.#head.push(bytes.slice(start, at));
      const head = latin1.decode(concatBytes(this.#head));
      this.#head = [];
      this.#headBytes = 0;
      this.#tail = 0;
      this.#headEnded(head);
      return at;
    }
    this.#head.push(bytes.slice(start, at));
    this.#headBytes += at - start;
    if (this.#headBytes > MAX_HEAD) this.opaque = true;
    return at;
  }

  #headEnded(head: string): void {
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
    if (status === 101 || !status) {
      this.opaque = true;
      return;
    }
    if (status < 200) return; // an interim answer (100 Continue): the real one follows
    const isHead = this.#owed[0] ?? false;
    const lines = head.toLowerCase().split("\r\n");
    const value = (name: string) =>
      lines.find((line) => line.startsWith(`${name}:`))?.slice(name.length + 1).trim();
    const length = value("content-length");
    // 205 too: a Response cannot carry content with it, and hyper then writes no length.
    if (isHead || status === 204 || status === 205 || status === 304) return this.#answered();
    if (value("transfer-encoding")?.endsWith("chunked")) {
      this.#state = Body.Size;
      this.#remaining = 0;
    } else if (length !== undefined && /^\d{1,15}$/.test(length)) {
      this.#remaining = Number(length);
      if (this.#remaining === 0) this.#answered();
      else this.#state = Body.Length;
    } else this.opaque = true; // read until the server closes
  }

  #chunkByte(byte: number): void {
    switch (this.#state) {
      case Body.Size: {
        const digit = byte >= 48 && byte <= 57
          ? byte - 48
          : (byte | 32) >= 97 && (byte | 32) <= 102
          ? (byte | 32) - 87
          : -1;
        if (digit >= 0) this.#remaining = this.#remaining * 16 + digit;
        else this.#state = byte === CR ? Body.SizeLf : Body.SizeRest;
        return;
      }
      case Body.SizeRest:
        if (byte === CR) this.#state = Body.SizeLf;
        return;
      case Body.SizeLf:
        this.#state = this.#remaining === 0 ? Body.Trailer : Body.Data;
        this.#lineEmpty = true;
        return;
      case Body.DataCr:
        this.#state = Body.DataLf;
        return;
      case Body.DataLf:
        this.#state = Body.Size;
        this.#remaining = 0;
        return;
      case Body.Trailer:
        if (byte === CR) this.#state = Body.TrailerLf;
        else this.#lineEmpty = false;
        return;
      case Body.TrailerLf:
        if (this.#lineEmpty) return this.#answered();
        this.#state = Body.Trailer;
        this.#lineEmpty = true;
        return;
    }
  }

  #answered(): void {
    this.#owed.shift();
    this.#state = Body.Head;
  }
}
