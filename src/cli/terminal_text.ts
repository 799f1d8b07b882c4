/**
 * Text that others chose (a backend's tool names and definitions, a client's registered name)
 * as an operator's terminal may show it: control and bidirectional control characters as "?"
 * (core/display_text.ts says why).
 */
import { withoutControls } from "../core/display_text.ts";

export function printable(text: string): string {
  return withoutControls(text, "?");
}
