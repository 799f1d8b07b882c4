import assert from "node:assert/strict";
import { SecretMask } from "../../observability/mask.ts";
import { freshTokenFetch, type TokenRefusal } from "./token_fetch.ts";

const HEADERS = { Authorization: "Bearer {{user.token}}", "X-Team": "core" };
const USER = { "user.id": "oidc:alice" };

/** The backend: answers each request with the next status, recording what it was sent. */
function backend(answers: { status: number; challenge?: string }[]) {
  const seen: { authorization: string | null; body: unknown }[] = [];
  const fetch: typeof globalThis.fetch = (_input, init) => {
    const headers = new Headers(init?.headers);
    seen.push({ authorization: headers.get("authorization"), body: init?.body });
    const next = answers.shift() ?? { status: 200 };
    return Promise.resolve(
      new Response(next.status === 200 ? "{}" : "refused", {
        status: next.status,
        headers: next.challenge ? { "www-authenticate": next.challenge } : {},
      }),
    );
  };
  return { fetch, seen };
}

function tokens(...values: string[]) {
  return () => Promise.resolve(values.length > 1 ? values.shift()! : values[0]);
}

Deno.test("freshTokenFetch() fills the token-bearing headers from the current token, record or Headers", async () => {
  const target = backend([]);
  const fetch = freshTokenFetch(
    HEADERS,
    USER,
    tokens("t1", "t2"),
    target.fetch,
    new SecretMask([]),
  );
  await (await fetch("http://backend/mcp", { headers: { "x-team": "core" } })).body?.cancel();
  await (await fetch("http://backend/mcp", { headers: new Headers() })).body?.cancel();
  assert.deepEqual(target.seen.map((s) => s.authorization), ["Bearer t1", "Bearer t2"]);
});

Deno.test("freshTokenFetch() hands a refused token to rejected and sends the request once more with the one it returns", async () => {
  const target = backend([{ status: 401, challenge: 'Bearer error="invalid_token"' }]);
  const refusals: [string, TokenRefusal][] = [];
  const fetch = freshTokenFetch(
    HEADERS,
    USER,
    tokens("old"),
    target.fetch,
    new SecretMask([]),
    (token, refusal) => {
      refusals.push([token, refusal]);
      return Promise.resolve("new");
    },
  );
  const response = await fetch("http://backend/mcp", { method: "POST", body: '{"id":1}' });
  assert.equal(response.status, 200);
  await response.body?.cancel();
  assert.deepEqual(refusals, [["old", { status: 401, challenge: 'Bearer error="invalid_token"' }]]);
  assert.deepEqual(target.seen, [
    { authorization: "Bearer old", body: '{"id":1}' },
    { authorization: "Bearer new", body: '{"id":1}' },
  ]);
});

Deno.test("freshTokenFetch() retries once only (the second refusal handed to rejected as retried), leaves other 403s alone, never resends a streamed body, and passes a step-up's refusal on", async () => {
  let asked = 0;
  const refusals: [string, TokenRefusal][] = [];
  const rejected = (token: string, refusal: TokenRefusal) => {
    asked++;
    refusals.push([token, refusal]);
    return Promise.resolve("new");
  };
  const twice = backend([{ status: 401 }, { status: 401 }, { status: 200 }]);
  const again = await freshTokenFetch(
    HEADERS,
    USER,
    tokens("old"),
    twice.fetch,
    new SecretMask([]),
    rejected,
  )(
    "http://backend/mcp",
  );
  assert.equal(again.status, 401);
  await again.body?.cancel();
  // The token refused again is reported once more (a server refusing every token means
  // connecting again, not a refresh on every call), and nothing is sent a third time.
  assert.deepEqual(refusals, [
    ["old", { status: 401, challenge: null }],
    ["new", { status: 401, challenge: null, retried: true }],
  ]);
  assert.equal(twice.seen.length, 2);
  asked = 1;

  const forbidden = backend([{ status: 403, challenge: 'Bearer error="invalid_token"' }]);
  const plain = await freshTokenFetch(
    HEADERS,
    USER,
    tokens("old"),
    forbidden.fetch,
    new SecretMask([]),
    rejected,
  )(
    "http://backend/mcp",
  );
  assert.equal(plain.status, 403);
  await plain.body?.cancel();
  assert.equal(asked, 1);

  const streamed = backend([{ status: 401 }]);
  const body = new ReadableStream({ start: (c) => c.close() });
  const once = await freshTokenFetch(
    HEADERS,
    USER,
    tokens("old"),
    streamed.fetch,
    new SecretMask([]),
    rejected,
  )(
    "http://backend/mcp",
    { method: "POST", body },
  );
  assert.equal(once.status, 401);
  await once.body?.cancel();
  assert.equal(streamed.seen.length, 1);

  const scoped = backend([{
    status: 403,
    challenge: 'Bearer error="insufficient_scope", scope="read admin"',
  }]);
  await assert.rejects(
    freshTokenFetch(HEADERS, USER, tokens("old"), scoped.fetch, new SecretMask([]), () => {
      throw new Error("connect again with read admin");
    })("http://backend/mcp"),
    /connect again with read admin/,
  );
});

Deno.test("freshTokenFetch() passes the refusal on untouched when rejected answers undefined", async () => {
  const target = backend([{ status: 403, challenge: 'Bearer error="insufficient_scope"' }]);
  const response = await freshTokenFetch(
    HEADERS,
    USER,
    tokens("old"),
    target.fetch,
    new SecretMask([]),
    () => Promise.resolve(undefined),
  )("http://backend/mcp");
  assert.equal(response.status, 403);
  await response.body?.cancel();
  assert.equal(target.seen.length, 1);
});
