/**
 * Text others wrote (tool names and descriptions from backends, client names, addresses, call
 * arguments) with every invisible or reordering character shown as its code point, so a value
 * cannot hide part of itself or reorder the line it sits in (a right-to-left override turning
 * "gpj.exe" into "exe.jpg"). hono/html escapes markup; this makes the rest readable.
 */

/** C0 and C1 controls, bidirectional embeddings, overrides, isolates and marks, and BOM. */
const INVISIBLE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;

/** The text with every invisible or reordering character shown as ⟨U+XXXX⟩. */
export function visible(text: string): string {
  return text.replace(
    INVISIBLE,
    (char) => `⟨U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}
