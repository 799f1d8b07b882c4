/**
 * A stdio process shared by everyone (`share: all`) keeps people apart where the wire cannot:
 * a question or log line of the process that cannot be tied to one person's call reaches no
 * one (the question is refused to the process, the log dropped and counted), and a line of
 * its output the gateway cannot read (too large, not JSON) fails only the call it answers
 * while everyone else's calls and sessions go on. The backend is
 * tests/fixtures/shared_tricks_server.ts, started by the gateway.
 */
import assert from "node:assert/strict";
import { startGateway, type TestGateway } from "./fixtures/gateway.ts";
import {
  Client,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  StreamableHTTPClientTransport,
} from "./fixtures/sdk.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef";

const CONFIG = `
limits: { requestTimeout: 30s, maxMessageBytes: 64KiB }
servers:
  tricks:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/shared_tricks_server.ts"]
    share: all
    serviceAuths: [{ type: bearer, tokens: ["${ALICE}", "${BOB}"] }]
`;

interface Person {
  client: Client;
  /** Questions and log lines that reached this person's client. */
  heard: string[];
  call(name: string, args?: Record<string, unknown>): Promise<string>;
}

async function person(gw: TestGateway, token: string, name: string): Promise<Person> {
  const heard: string[] = [];
  const client = new Client({ name, version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    heard.push(`question: ${request.params.message}`);
    return { action: "accept", content: { ok: true } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    heard.push(`log: ${String(notification.params.data)}`);
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/tricks/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await within(`${name} connecting`, client.connect(transport));
  const call = async (tool: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name: tool, arguments: args });
    const text = (result as { content: { text?: string }[] }).content[0]?.text ?? "";
    return result.isError ? `error: ${text}` : text;
  };
  return { client, heard, call };
}

Deno.test("share: all: a question or log of the process about bob's ended call never reaches alice", async () => {
  const gw = await startGateway(CONFIG);
  const people: Person[] = [];
  try {
    const alice = await person(gw, ALICE, "alice");
    const bob = await person(gw, BOB, "bob");
    people.push(alice, bob);
    // alice's call waits on the process, the only call in flight once bob's has ended.
    const holding = alice.call("hold");
    holding.catch(() => {}); // awaited below; a failure before then is the test's own
    await waitUntil(
      "alice's call to be held by the process",
      async () => await bob.call("held") === "1",
    );

    assert.equal(await bob.call("later", { secret: "bob-payroll" }), "armed");
    let told = "";
    await waitUntil(
      "the process to hear back about its question",
      async () => !(told = await bob.call("last_ask")).startsWith("nothing"),
    );
    assert.match(told, /^refused: elicitation\/create: another person's request ran/);
    assert.deepEqual(
      gw.gateway.carried.processes.dropped().get("tricks"),
      1,
      "the log line, tied to no call, was dropped and counted",
    );

    assert.equal(await bob.call("release"), "released all");
    assert.equal(await within("alice's held call", holding), "released");
    assert.deepEqual(alice.heard, [], "alice heard nothing of bob's work");
    assert.deepEqual(bob.heard, [], "nor did bob: his call had ended");
  } finally {
    await Promise.allSettled(people.map((who) => who.client.close()));
    await gw.close();
  }
});

Deno.test("share: all: an answer too large or not JSON fails only its own call; the process and the others go on", async () => {
  const gw = await startGateway(CONFIG);
  const people: Person[] = [];
  try {
    const alice = await person(gw, ALICE, "alice");
    const bob = await person(gw, BOB, "bob");
    people.push(alice, bob);
    const pid = await alice.call("pid");
    const holding = alice.call("hold");
    holding.catch(() => {}); // awaited below; a failure before then is the test's own
    await waitUntil(
      "alice's call to be held by the process",
      async () => await bob.call("held") === "1",
    );

    const big = await bob.call("big", { size: 200_000 }).catch((error) => String(error));
    assert.match(big, /larger than limits\.maxMessageBytes \(64 KiB\)/);
    const broken = await bob.call("broken").catch((error) => String(error));
    assert.match(broken, /the backend's answer could not be read \(it is not JSON\)/);
    assert.equal(await bob.call("noise"), "after the noise", "a stray line fails nothing");

    assert.equal(await bob.call("pid"), pid, "the same process still serves bob's session");
    assert.equal(await bob.call("release"), "released all");
    assert.equal(await within("alice's held call", holding), "released");
    assert.equal(await alice.call("pid"), pid, "and alice's");
  } finally {
    await Promise.allSettled(people.map((who) => who.client.close()));
    await gw.close();
  }
});
