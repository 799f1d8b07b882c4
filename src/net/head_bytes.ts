/**
 * Byte-level reading of an HTTP/1.1 request head, for the TCP front's framing
 * (request_framing.ts): where a head ends, where a line ends, whether a header line names a
 * given header, and a header's decimal value. Nothing is decoded to text.
 */

export const CR = 13;
export const LF = 10;

/**
 * The index in `chunk` just past the head's CRLFCRLF, or -1. `parts` are earlier bytes of the
 * same head (none of which ended it).
 */
export function findHeadEnd(parts: Uint8Array[], chunk: Uint8Array, at: number): number {
  if (parts.length === 0) {
    // The usual case, a head that begins in this chunk: no bytes from before to look back at.
    for (let i = chunk.indexOf(LF, at + 3); i >= 0; i = chunk.indexOf(LF, i + 1)) {
      if (chunk[i - 1] !== CR || chunk[i - 2] !== LF || chunk[i - 3] !== CR) continue;
      if (isOnlyBlankLines(parts, chunk, at, i)) continue;
      return i + 1;
    }
    return -1;
  }
  // The end may straddle earlier parts and this chunk: look at the last three bytes before.
  const tail: number[] = [];
  for (let p = parts.length - 1; p >= 0 && tail.length < 3; p--) {
    const part = parts[p];
    for (let i = part.length - 1; i >= 0 && tail.length < 3; i--) tail.unshift(part[i]);
  }
  for (let i = at; i < chunk.length; i++) {
    if (chunk[i] !== LF) continue;
    const back = (k: number) => {
      const j = i - k;
      if (j >= at) return chunk[j];
      const t = tail.length - (at - j);
      return t >= 0 ? tail[t] : -1;
    };
    if (back(1) === CR && back(2) === LF && back(3) === CR) {
      // Empty lines before the request line do not end a head that has not begun.
      if (isOnlyBlankLines(parts, chunk, at, i)) continue;
      return i + 1;
    }
  }
  return -1;
}

/** Whether everything of this head up to index `i` of `chunk` is CR and LF. */
function isOnlyBlankLines(parts: Uint8Array[], chunk: Uint8Array, at: number, i: number): boolean {
  for (const part of parts) for (const byte of part) if (byte !== CR && byte !== LF) return false;
  for (let j = at; j <= i; j++) if (chunk[j] !== CR && chunk[j] !== LF) return false;
  return true;
}

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
