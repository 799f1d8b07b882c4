import assert from "node:assert/strict";
import { formatTraceparent, parseTraceparent, saneTracestate } from "./trace_context.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

Deno.test("parseTraceparent() reads the W3C example into its parts", () => {
  assert.deepEqual(parseTraceparent(`00-${TRACE}-${SPAN}-01`), {
    traceId: TRACE,
    spanId: SPAN,
    traceFlags: 1,
  });
});

Deno.test("parseTraceparent() refuses what W3C Trace Context says to ignore", () => {
  for (
    const bad of [
      undefined,
      42,
      "",
      `00-${TRACE}-${SPAN}`,
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${"0".repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
    ]
  ) {
    assert.equal(parseTraceparent(bad), undefined, String(bad));
  }
});

Deno.test("parseTraceparent() reads a later version's first four fields", () => {
  assert.equal(parseTraceparent(`01-${TRACE}-${SPAN}-00-what-comes-next`)?.traceFlags, 0);
});

Deno.test("formatTraceparent() writes version 00 with two hex digits of flags", () => {
  assert.equal(
    formatTraceparent({ traceId: TRACE, spanId: SPAN, traceFlags: 1 }),
    `00-${TRACE}-${SPAN}-01`,
  );
});

Deno.test("saneTracestate() passes printable text and drops the rest", () => {
  assert.equal(
    saneTracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
    "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
  );
  assert.equal(saneTracestate("a=1\r\nx: y"), undefined);
  assert.equal(saneTracestate(""), undefined);
  assert.equal(saneTracestate({}), undefined);
});
