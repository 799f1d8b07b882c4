/**
 * The JWKS fetch of an ID-JAG issuer against a real HTTP server on 127.0.0.1 that answers as a
 * hostile or broken issuer would: another issuer's discovery, a redirect, an endless or huge
 * body, a jwks_uri elsewhere in plain http. Each is an error naming what was wrong, within the
 * bounds of time and size.
 */
import assert from "node:assert/strict";
import { testClock } from "../../tests/fixtures/clock.ts";
import { fetchIssuerJwks } from "./issuer_jwks.ts";

type Handler = (path: string, origin: string) => Response;

async function issuerAnswering(
  handler: Handler,
): Promise<{ issuer: string; close: () => Promise<void> }> {
  const ready = Promise.withResolvers<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    (request) => {
      const url = new URL(request.url);
      return handler(url.pathname, url.origin);
    },
  );
  return { issuer: `http://127.0.0.1:${await ready.promise}`, close: () => server.shutdown() };
}

const discovery = (origin: string, jwksUri: string) =>
  Response.json({ issuer: origin, jwks_uri: jwksUri });

Deno.test("fetchIssuerJwks() refuses what a hostile issuer answers, naming why", async () => {
  const clock = testClock();
  const cases: [string, Handler, RegExp][] = [
    [
      "discovery of another issuer",
      (_path, origin) => Response.json({ issuer: `${origin}/other`, jwks_uri: `${origin}/k` }),
      /names issuer http:\/\/127\.0\.0\.1:\d+\/other/,
    ],
    [
      "a redirect to the keys elsewhere",
      (path, origin) =>
        path === "/jwks"
          ? new Response(null, { status: 302, headers: { location: "http://10.0.0.1/jwks" } })
          : discovery(origin, `${origin}/jwks`),
      /\/jwks answered 302/,
    ],
    [
      "a body over 256 KiB",
      (path, origin) =>
        path === "/jwks"
          ? new Response(`{"keys":[],"pad":"${"x".repeat(300 * 1024)}"}`)
          : discovery(origin, `${origin}/jwks`),
      /answered more than 262144 bytes/,
    ],
    [
      "an endless body",
      (path, origin) =>
        path === "/jwks"
          ? new Response(
            new ReadableStream({
              pull: (controller) => controller.enqueue(new Uint8Array(64 * 1024)),
            }),
          )
          : discovery(origin, `${origin}/jwks`),
      /answered more than 262144 bytes/,
    ],
    [
      "keys over plain http on another host",
      (_path, origin) => discovery(origin, "http://keys.example/jwks"),
      /http:\/\/keys\.example\/jwks is not https/,
    ],
    [
      "not JSON",
      (path, origin) =>
        path === "/jwks" ? new Response("<html>") : discovery(origin, `${origin}/jwks`),
      /answered something other than JSON/,
    ],
  ];
  for (const [name, handler, expected] of cases) {
    const { issuer, close } = await issuerAnswering(handler);
    try {
      await assert.rejects(fetchIssuerJwks(issuer, clock), expected, name);
    } finally {
      await close();
    }
  }
});

Deno.test("fetchIssuerJwks() gives up on an issuer that never finishes its answer once the clock passes 5 s", async () => {
  const clock = testClock();
  const keysAsked = Promise.withResolvers<void>();
  const { issuer, close } = await issuerAnswering((path, origin) => {
    if (path !== "/jwks") return discovery(origin, `${origin}/jwks`);
    keysAsked.resolve();
    return new Response(new ReadableStream({ start: (c) => c.enqueue(new Uint8Array(10)) }));
  });
  try {
    const fetching = fetchIssuerJwks(issuer, clock);
    // The keys' answer has begun and stalls: the gateway's clock moves past the bound.
    await keysAsked.promise;
    clock.advance(5_001);
    await assert.rejects(fetching, /abort|timeout/i);
  } finally {
    await close();
  }
});
