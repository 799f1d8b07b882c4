/**
 * Byte-level reading of an HTTP/1.1 request head, for the TCP front's framing
 * (request_framing.ts): where a head ends, where a line ends, whether a header line names a
 * given header, and a header's decimal value. Nothing is decoded to text.
 */

export const CR = 13;
export const LF = 10;

/** Empty lines allowed before a request line (RFC 9112 §2.2 asks servers to ignore at least one). */
export const MAX_EMPTY_LINES = 4;

/**
 * Finds where a request head ends, one chunk at a time, in time linear in the bytes given: each
 * byte is looked at once, whatever the chunks' sizes, however many lines come first (a search
 * that began again at every blank line once let 64 KiB of CRLF stall the gateway).
 *
 * Lines must end with CRLF: a LF without CR before it, or a CR without LF after it, is refused.
 * `Deno.serve` (hyper) takes a bare LF as a line end and the front would not, so a line the front
 * read as one could reach the server as two (a forged header behind it); refusing both makes
 * the two agree on every line of every head the front lets through.
 */
export class HeadScanner {
  /** The last byte given was a CR: the next must be LF. */
  #pendingCr = false;
  /** Bytes of the current line so far, its CRLF left out. */
  #lineBytes = 0;
  /** Whether the request line has come (empty lines before it are skipped, a few at most). */
  #started = false;
  #emptyLines = 0;

  /** Of the head that ended last, the bytes of empty lines before its request line. */
  emptyLineBytes = 0;

  /**
   * Scans `chunk` from `at`: the index just past the head's last CRLF once it has ended (the
   * scanner is then ready for the next head), -1 while more is needed, or why the head is
   * refused.
   */
  scan(chunk: Uint8Array, at: number): number | string {
    // A plain loop over the bytes: for heads of a few hundred bytes it is about twice as fast
    // as searching for CR and LF with indexOf (which must look for both).
    let lineBytes = this.#lineBytes;
    let pendingCr = this.#pendingCr;
    for (let i = at; i < chunk.length; i++) {
      const byte = chunk[i];
      if (pendingCr) {
        if (byte !== LF) return BARE_CR;
        pendingCr = false;
        if (lineBytes > 0) {
          this.#started = true;
          lineBytes = 0;
        } else if (this.#started) {
          this.emptyLineBytes = this.#emptyLines * 2;
          this.reset();
          return i + 1;
        } else if (++this.#emptyLines > MAX_EMPTY_LINES) {
          return `more than ${MAX_EMPTY_LINES} empty lines before the request line`;
        }
      } else if (byte === CR) pendingCr = true;
      else if (byte === LF) return BARE_LF;
      else lineBytes++;
    }
    this.#lineBytes = lineBytes;
    this.#pendingCr = pendingCr;
    return -1;
  }

  reset(): void {
    this.#pendingCr = false;
    this.#lineBytes = 0;
    this.#started = false;
    this.#emptyLines = 0;
  }
}

const BARE_LF = "a line ends with LF alone: lines of a request head end with CRLF";
const BARE_CR = "a CR not followed by LF in a request head: lines end with CRLF";

/** Where the CRLF at or after `from` begins; the head's end when there is none. */
export function crlfFrom(head: Uint8Array, from: number): number {
  for (let at = head.indexOf(CR, from); at >= 0; at = head.indexOf(CR, at + 1)) {
    if (head[at + 1] === LF) return at;
  }
  return head.length;
}

/** Whether `head[start, end)` is `name` (lower-case), in any case. */
export function isName(head: Uint8Array, start: number, end: number, name: Uint8Array): boolean {
  if (end - start !== name.length) return false;
  for (let i = 0; i < name.length; i++) {
    const byte = head[start + i];
    // A-Z lower-cased, nothing else: a stray CR must not pass for "-" (0x0d | 0x20 is 0x2d).
    if ((byte >= 65 && byte <= 90 ? byte + 32 : byte) !== name[i]) return false;
  }
  return true;
}

/** The number `head[start, end)` holds between optional spaces and tabs: 1 to 15 digits. */
export function digitsOf(head: Uint8Array, start: number, end: number): number | undefined {
  while (start < end && (head[start] === 32 || head[start] === 9)) start++;
  while (end > start && (head[end - 1] === 32 || head[end - 1] === 9)) end--;
  if (end === start || end - start > 15) return undefined;
  let value = 0;
  for (let at = start; at < end; at++) {
    const digit = head[at] - 48;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit;
  }
  return value;
}

const HTTP11 = new TextEncoder().encode(" HTTP/1.1");

/** Whether the request line `head[start, end)` ends with " HTTP/1.1". */
export function isHttp11(head: Uint8Array, start: number, end: number): boolean {
  if (end - start < HTTP11.length) return false;
  for (let i = 0; i < HTTP11.length; i++) {
    if (head[end - HTTP11.length + i] !== HTTP11[i]) return false;
  }
  return true;
}

/**
 * Whether `head[start, end)`, spaces and tabs around it aside, can be a Host value (RFC 9112
 * §3.2, RFC 3986 §3.2.2): a name, an IPv4 or bracketed IPv6 literal, a port; empty too (a
 * target without an authority). Anything else (a slash, an "@", a space inside) is refused.
 */
export function isHostValue(head: Uint8Array, start: number, end: number): boolean {
  while (start < end && (head[start] === 32 || head[start] === 9)) start++;
  while (end > start && (head[end - 1] === 32 || head[end - 1] === 9)) end--;
  for (let at = start; at < end; at++) {
    const b = head[at];
    const ok = (b >= 97 && b <= 122) || (b >= 65 && b <= 90) || (b >= 48 && b <= 57) ||
      // - . _ ~ ! $ & ' ( ) * + , ; = : [ ] %
      [45, 46, 95, 126, 33, 36, 38, 39, 40, 41, 42, 43, 44, 59, 61, 58, 91, 93, 37].includes(b);
    if (!ok) return false;
  }
  return true;
}
