import assert from "node:assert/strict";
import { decode } from "./http1_body.ts";

Deno.test("decode() hands out a gzip bomb in chunks of about 1 MiB, not all at once", async () => {
  // 64 MiB of zeros is about 64 KiB of gzip: one socket read's worth.
  const compressed = new Uint8Array(
    await new Response(
      new Blob([new Uint8Array(64 * 1024 * 1024)]).stream().pipeThrough(
        new CompressionStream("gzip"),
      ),
    ).arrayBuffer(),
  );
  const wire = new ReadableStream<Uint8Array<ArrayBuffer>>({
    start(controller) {
      controller.enqueue(compressed);
      controller.close();
    },
  });
  const reader = decode(wire, "gzip").getReader();
  let largest = 0;
  try {
    for (let i = 0; i < 4; i++) {
      const { value } = await reader.read();
      largest = Math.max(largest, value!.length);
    }
  } finally {
    await reader.cancel();
  }
  assert.ok(largest <= 1.1 * 1024 * 1024, `a chunk of ${largest} bytes`);
});

Deno.test("decode() refuses an encoding it does not know", () => {
  assert.throws(() => decode(new ReadableStream(), "br"), /unsupported Content-Encoding: br/);
});
