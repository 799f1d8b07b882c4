/**
 * Text that others chose (a client's registered name, a backend's tool names and definitions)
 * made safe to show a person: control characters would move a terminal's cursor or erase a line,
 * and bidirectional controls reorder what follows them on screen or on a page (U+202E shows
 * "read ~/.ssh" backwards, U+2066…U+2069 move whole runs, U+061C, U+200E and U+200F tip the
 * direction of what is around them). Each is replaced, never silently dropped, so the reader
 * sees that something was there.
 */
const UNSHOWABLE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every control and bidirectional control character replaced by `replacement`. */
export function withoutControls(text: string, replacement: string): string {
  return text.replace(UNSHOWABLE, replacement);
}
