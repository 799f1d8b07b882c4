/**
 * A value a header can carry whatever it holds, and a list that stays a list: `%`, `,`, and
 * every byte outside visible ASCII (spaces, controls, non-ASCII as its UTF-8 bytes) are
 * percent-encoded. A backend splits a list at commas and percent-decodes each part
 * (`decodeURIComponent`) to get the names back exactly.
 */
const UNSAFE = /[^\x21-\x24\x26-\x2b\x2d-\x7e]/u;
const EACH_UNSAFE = new RegExp(UNSAFE.source, "gu");

export function headerSafe(text: string): string {
  if (!UNSAFE.test(text)) return text;
  // A lone surrogate has no UTF-8 form: it goes as U+FFFD rather than failing the request.
  return text.toWellFormed().replace(EACH_UNSAFE, (char) => encodeURIComponent(char));
}
