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

/**
 * Escape sequences a terminal program writes (colours, cursor moves, titles): CSI (`ESC [ …
 * letter`), OSC (`ESC ] … BEL` or `ESC \\`) and two-character escapes. A log line holds the
 * text, not the paint: `\u001b[1;31merror\u001b[0m` in a JSON log is noise to whoever reads it.
 */
const TERMINAL_ESCAPES =
  // deno-lint-ignore no-control-regex
  /\u001b\[[0-?]*[ -\/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]|\u009b[0-?]*[ -\/]*[@-~]/g;

/** `text` without the terminal escape sequences in it. */
export function withoutTerminalEscapes(text: string): string {
  return text.replace(TERMINAL_ESCAPES, "");
}
