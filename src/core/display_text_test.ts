import assert from "node:assert/strict";
import { withoutTerminalEscapes } from "./display_text.ts";

Deno.test("withoutTerminalEscapes() takes out colours, cursor moves and titles, and keeps the text", () => {
  assert.equal(
    withoutTerminalEscapes('\x1b[1;31merror\x1b[0m: not found \x1b[36m"x.ts"\x1b[0m'),
    'error: not found "x.ts"',
  );
  assert.equal(withoutTerminalEscapes("\x1b[2K\x1b[1Gdone\x1b]0;title\x07!"), "done!");
  assert.equal(withoutTerminalEscapes("plain text, tabs\tkept"), "plain text, tabs\tkept");
});
