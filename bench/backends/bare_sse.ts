/**
 * The memory reference: a bare `Deno.serve` holding SSE streams the way any SSE server must,
 * one first event and a keep-alive comment every 15 s per stream, and nothing else.
 *
 *   deno run --allow-net bench/backends/bare_sse.ts
 */
const encoder = new TextEncoder();
const KEEP_ALIVE = encoder.encode(": keep-alive\n\n");

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`listening on ${port}`),
}, () => {
  let timer: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(`event: ready\ndata: {}\n\n`));
      timer = setInterval(() => controller.enqueue(KEEP_ALIVE), 15_000);
    },
    cancel() {
      clearInterval(timer);
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
});
