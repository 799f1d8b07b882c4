import assert from "node:assert/strict";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { type ServerName, userId } from "../../core/ids.ts";
import { Secret } from "../../core/secret.ts";
import { deriveAesKey } from "../../crypto/keys.ts";
import {
  MAX_STATE_CHARS,
  openRequestState,
  paramsDigest,
  type RequestStateBinding,
  RequestStateError,
  requestStateRefusal,
  sealRequestState,
} from "./request_state.ts";

const master = new Secret("m".repeat(48));
const key = await deriveAesKey(master, "mcp-request-state");
const otherPurpose = await deriveAesKey(master, "vault-encryption");
const TTL = 60_000;
const BINDING: RequestStateBinding = {
  person: userId("ann"),
  server: "files" as ServerName,
  method: "tools/call",
  params: { name: "ask", arguments: { q: 1 }, _meta: { progressToken: 1 } },
};

async function sealed(clock = frozen()) {
  return { clock, state: await sealRequestState(key, clock, BINDING, "link-7/call-3", TTL) };
}

function frozen() {
  const clock = testClock();
  clock.freeze();
  return clock;
}

Deno.test("openRequestState() gives back the pending reference and expiry it sealed", async () => {
  const { clock, state } = await sealed();
  const retry = {
    ...BINDING,
    // The retry's params: new progress token, answers and the state itself; keys reordered.
    params: {
      arguments: { q: 1 },
      name: "ask",
      inputResponses: { a: {} },
      requestState: state,
      _meta: { progressToken: 2 },
    },
  };
  assert.deepEqual(await openRequestState([key], clock, state, retry), {
    pending: "link-7/call-3",
    expiresAt: clock.now() + TTL,
  });
});

const tamper = (state: string) => {
  const last = state.at(-2) === "A" ? "B" : "A";
  return state.slice(0, -2) + last + state.slice(-1);
};

/** Each row: how a retry's state or binding differs, and the code it is refused with. */
const REFUSALS: {
  name: string;
  state?: (state: string) => unknown;
  binding?: Partial<RequestStateBinding>;
  keys?: CryptoKey[];
  advance?: number;
  code: string;
}[] = [
  {
    name: "a forged state",
    state: () => "v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAA",
    code: "request_state_invalid",
  },
  { name: "a tampered state", state: tamper, code: "request_state_invalid" },
  {
    name: "a state with text appended",
    state: (s) => `${s}-TAMPERED`,
    code: "request_state_invalid",
  },
  { name: "a state that is not a string", state: () => 42, code: "request_state_invalid" },
  {
    name: "a state under another purpose's key",
    keys: [otherPurpose],
    code: "request_state_invalid",
  },
  { name: "an expired state", advance: TTL, code: "request_state_expired" },
  {
    name: "another person's state",
    binding: { person: userId("bob") },
    code: "request_state_other_person",
  },
  {
    name: "another server's state",
    binding: { server: "mail" as ServerName },
    code: "request_state_other_server",
  },
  {
    name: "a state of another method",
    binding: { method: "prompts/get" },
    code: "request_state_other_request",
  },
  {
    name: "a state of other params",
    binding: { params: { name: "ask", arguments: { q: 2 } } },
    code: "request_state_other_request",
  },
];

for (const row of REFUSALS) {
  Deno.test(`openRequestState() refuses ${row.name} with ${row.code}`, async () => {
    const { clock, state } = await sealed();
    if (row.advance) clock.advance(row.advance);
    await assert.rejects(
      () =>
        openRequestState(
          row.keys ?? [key],
          clock,
          row.state ? row.state(state) : state,
          { ...BINDING, ...row.binding },
        ),
      (error: unknown) => error instanceof RequestStateError && error.code === row.code,
    );
  });
}

Deno.test("openRequestState() refuses a state past its size limit, even one sealed here", async () => {
  const clock = frozen();
  const state = await sealRequestState(key, clock, BINDING, "p".repeat(MAX_STATE_CHARS), TTL);
  await assert.rejects(
    () => openRequestState([key], clock, state, BINDING),
    (error: unknown) =>
      error instanceof RequestStateError && error.code === "request_state_invalid",
  );
});

Deno.test("openRequestState() still opens a state a millisecond before it expires", async () => {
  const { clock, state } = await sealed();
  clock.advance(TTL - 1);
  assert.equal((await openRequestState([key], clock, state, BINDING)).pending, "link-7/call-3");
});

Deno.test("openRequestState() opens a state sealed under an earlier key during rotation", async () => {
  const { clock, state } = await sealed();
  const rotated = await deriveAesKey(new Secret("n".repeat(48)), "mcp-request-state");
  assert.equal(
    (await openRequestState([rotated, key], clock, state, BINDING)).pending,
    "link-7/call-3",
  );
});

Deno.test("paramsDigest() ignores key order, _meta and the retry params", async () => {
  assert.equal(
    await paramsDigest({ a: 1, b: { c: [1, { d: 2, e: 3 }] } }),
    await paramsDigest({ b: { c: [1, { e: 3, d: 2 }] }, a: 1, _meta: { x: 1 }, requestState: "s" }),
  );
  assert.notEqual(await paramsDigest({ a: 1 }), await paramsDigest({ a: "1" }));
});

/** Each row: a refusal's code beside the -32602 answer the client gets. */
const ANSWERS: [string, string, string][] = [
  ["request_state_invalid", "requestState failed its integrity check", "request_state_invalid"],
  [
    "request_state_other_person",
    "requestState failed its integrity check",
    "request_state_invalid",
  ],
  [
    "request_state_other_server",
    "requestState failed its integrity check",
    "request_state_invalid",
  ],
  ["request_state_expired", "requestState has expired", "request_state_expired"],
  [
    "request_state_other_request",
    "requestState belongs to a request with another method or other params",
    "request_state_other_request",
  ],
];

for (const [code, why, shown] of ANSWERS) {
  Deno.test(`requestStateRefusal() answers ${code} with -32602 saying ${shown}`, () => {
    const error = new RequestStateError(code as RequestStateError["code"], "x");
    assert.deepEqual(requestStateRefusal(3, error), {
      jsonrpc: "2.0",
      id: 3,
      error: {
        code: -32602,
        message: `${why}: send the original request again without requestState and inputResponses`,
        data: { reason: shown },
      },
    });
  });
}
