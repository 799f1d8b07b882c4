import assert from "node:assert/strict";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { RecentEvents } from "../../observability/recent_events.ts";
import { LiveStreams, TICK_MS } from "./live.ts";
import type { ConsoleSources } from "./sources.ts";

Deno.test("LiveStreams ends a stream whose page stopped reading, rather than queue for it", async () => {
  const clock = testClock();
  clock.freeze();
  const events = new RecentEvents();
  const sources = { servers: () => [], series: () => [], events } as unknown as ConsoleSources;
  const live = new LiveStreams(clock);
  const ctx = { root: "/admin", csrf: "t", admin: "ops@example.com", now: clock.now() };
  const response = live.stream(ctx, sources, "session", 0);
  assert.equal(live.open, 1);
  // Busy minutes with large arguments; the page never reads a byte.
  for (let tick = 0; tick < 60 && live.open > 0; tick++) {
    for (let i = 0; i < 20; i++) {
      events.add({
        at: clock.now(),
        kind: "call",
        what: "tools/call echo",
        outcome: "ok",
        detail: { arguments: "x".repeat(4_000) },
      });
    }
    clock.advance(TICK_MS);
  }
  assert.equal(live.open, 0, "the stream that fell behind was ended and its place freed");
  await assert.rejects(response.body!.getReader().read(), /stopped reading/);
});
