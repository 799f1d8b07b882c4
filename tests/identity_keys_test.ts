/**
 * `gatehouse keys rotate` beside a running gateway on one storage: the new key is published at
 * once and signs once every backend's cached key set can have it, and the JWKS keeps the previous key until every
 * assertion it signed has expired, so a backend verifying with `jose` accepts both meanwhile.
 * The gateway keeps no `secret:` here: the command finds the generated one in storage.
 */
import assert from "node:assert/strict";
import * as jose from "jose";
import { testClock } from "./fixtures/clock.ts";
import { startGateway } from "./fixtures/gateway.ts";
import { startIdentityBackend } from "./fixtures/identity_backend.ts";
import { callTool2026 } from "./fixtures/raw.ts";
import { runKeysCommand } from "../src/cli/keys.ts";
import {
  KEY_ACTIVATION_MS,
  PUBLISHED_AFTER_RETIREMENT_MS,
} from "../src/credentials/assertion_keys.ts";
import { openKvStore } from "../src/store/kv.ts";

const TOKEN = "alice-static-token-0123456789";

Deno.test("keys rotate: the new key signs, the old one stays published until its assertions expired", async () => {
  const clock = testClock();
  clock.freeze();
  const store = await openKvStore(":memory:", { clock });
  const backend = await startIdentityBackend();
  const gw = await startGateway(
    `
baseUrl: http://127.0.0.1:{{PORT}}
servers:
  crm:
    transport: streamable-http
    url: ${backend.url}
    identity: { assertion: true }
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`,
    {},
    { clock, store },
  );
  try {
    const assertion = async () => {
      const response = await callTool2026(`${gw.url}/crm/mcp`, TOKEN, "whoami");
      const body = await response.json();
      assert.ok(body.result, JSON.stringify(body));
      return JSON.parse(body.result.content[0].text)["x-gatehouse-assertion"] as string;
    };
    /** The JWKS as published now, and a verification against it at the gateway's time. */
    const published = async () => {
      const set = await (await fetch(`${gw.url}/.well-known/gatehouse/jwks.json`)).json();
      return set as { keys: jose.JWK[] };
    };
    const verify = async (token: string) =>
      await jose.jwtVerify(token, jose.createLocalJWKSet(await published()), {
        audience: `${gw.url}/crm`,
        issuer: gw.url,
        currentDate: new Date(clock.now()),
      });
    const keysCommand = async (...args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runKeysCommand(args, {
        loadConfig: () => Promise.resolve(gw.config),
        // The gateway's own storage; the command's close() must not close it under the gateway.
        openStore: () => Promise.resolve({ ...storeView(store), close: () => {} }),
        clock,
        defaultConfigPath: "unused.yaml",
        out: (line) => out.push(line),
        err: (line) => err.push(line),
      });
      return { code, out: out.join("\n"), err: err.join("\n") };
    };

    const first = await assertion();
    const oldKid = jose.decodeProtectedHeader(first).kid!;
    await verify(first);
    assert.deepEqual((await published()).keys.map((key) => key.kid), [oldKid]);
    assert.equal((await keysCommand("list")).out, oldKid);

    const rotated = await keysCommand("rotate");
    assert.equal(rotated.code, 0, rotated.err);
    const newKid = /signing with (\S+)/.exec(rotated.out)![1];
    assert.notEqual(newKid, oldKid);
    assert.match(rotated.out, new RegExp(`still published until .*: ${oldKid}`));

    // Published at once, before it signs: a backend's cached key set has it by then.
    clock.advance(31_000);
    assert.equal(jose.decodeProtectedHeader(await assertion()).kid, oldKid);
    assert.deepEqual((await published()).keys.map((key) => key.kid), [newKid, oldKid]);
    // Once its time has come (and the minute an assertion is reused has passed).
    clock.advance(KEY_ACTIVATION_MS);
    const second = await assertion();
    assert.equal(jose.decodeProtectedHeader(second).kid, newKid);
    assert.deepEqual((await published()).keys.map((key) => key.kid), [newKid, oldKid]);
    await verify(first);
    await verify(second);

    // Once every assertion of the old key has expired, it is no longer published.
    clock.advance(PUBLISHED_AFTER_RETIREMENT_MS);
    assert.deepEqual((await published()).keys.map((key) => key.kid), [newKid]);
    await assert.rejects(
      jose.jwtVerify(first, jose.createLocalJWKSet(await published()), {
        currentDate: new Date(clock.now() - PUBLISHED_AFTER_RETIREMENT_MS),
      }),
      (error: Error & { code?: string }) => error.code === "ERR_JWKS_NO_MATCHING_KEY",
    );
    await verify(await assertion());
    // The private key is nowhere in what is served or logged.
    assert.ok(!gw.logs.join("\n").includes('"d"'));
    assert.ok((await published()).keys.every((key) => key.d === undefined));
  } finally {
    await gw.close();
    await backend.close();
    store.close();
  }
});

/** The store's methods bound to it, so a copy with another close() still works. */
function storeView<T extends object>(store: T): T {
  const view = {} as Record<string, unknown>;
  let proto: object | null = store;
  while (proto && proto !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = (store as Record<string, unknown>)[name];
      if (typeof value === "function" && name !== "constructor" && !(name in view)) {
        view[name] = (value as (...args: unknown[]) => unknown).bind(store);
      }
    }
    proto = Object.getPrototypeOf(proto);
  }
  return view as T;
}
