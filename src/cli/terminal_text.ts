/**
 * Text that others chose (a backend's tool names and definitions, a client's registered name)
 * as an operator's terminal may show it: control characters would move the cursor or erase a
 * line (an ESC sequence can hide the line of a diff that matters), and bidirectional controls
 * reorder what follows them on screen (U+202E shows "read ~/.ssh" backwards, U+2066…U+2069 move
 * whole runs), so both are shown as "?".
 */
const UNSHOWABLE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string): string {
  return text.replace(UNSHOWABLE, "?");
}
