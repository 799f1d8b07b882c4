import assert from "node:assert/strict";
import { shown, shownJson, visible } from "./text.ts";

Deno.test("visible() shows control and bidirectional characters as their code points", () => {
  assert.equal(
    visible("a\u202Eb\u2066c\u0000d\u200Be\nf"),
    "a⟨U+202E⟩b⟨U+2066⟩c⟨U+0000⟩d⟨U+200B⟩e\nf",
  );
});

Deno.test("shown() escapes, isolates and folds; a 100 kB value shows a bounded part", async () => {
  const hostile = `<script>alert(1)</script>"><img src=x onerror=alert(2)>\u202E`;
  const short = (await shown(hostile, 200)).toString();
  assert.equal(
    short,
    "<bdi>&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;⟨U+202E⟩</bdi>",
  );
  const long = (await shown(hostile + "A".repeat(100_000), 120)).toString();
  assert.ok(long.startsWith('<details class="fold">'), long.slice(0, 80));
  assert.ok(long.length < 6_000, `${long.length} characters`);
  assert.ok(!long.includes("<script>") && !long.includes("<img"));
  assert.match(long, /more characters not shown/);
  const json = (await shownJson({ name: hostile })).toString();
  assert.ok(!json.includes("<script>") && json.includes("&lt;script&gt;"));
});
