/**
 * An aggregate's discovery cache never hands one person's lists to another: a member whose
 * process is a person's own (`share: person`, or one per session) keeps what that person left in
 * it, so its lists are cached per person (src/config/per_person.ts decides). Regression: alice's
 * note, listed through the aggregate, was served from the shared cache to bob.
 */
import assert from "node:assert/strict";
import { connectClient } from "./fixtures/client.ts";
import { startGateway } from "./fixtures/gateway.ts";
import { type Client, ResourceListChangedNotificationSchema } from "./fixtures/sdk.ts";
import { within } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef";

function config(share: string): string {
  const people = `serviceAuths: [{ type: bearer, tokens: ["${ALICE}", "${BOB}"] }]`;
  return `
limits: { requestTimeout: 20s }
servers:
  notes:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts", "0", notes]
    share: ${share}
    ${people}
  all:
    transport: aggregate
    servers: [notes]
    cacheTtl: 10m
    ${people}
`;
}

for (const share of ["person", "session"]) {
  Deno.test(`aggregate over a share: ${share} member: one person's list never reaches another`, async () => {
    const gw = await startGateway(config(share));
    const clients: Client[] = [];
    const connect = async (server: string, token: string) => {
      const client = await connectClient(gw.url, server, "streamable", token);
      clients.push(client);
      return client;
    };
    try {
      const alice = await connect("all", ALICE);
      await alice.callTool({ name: "notes.add_note", arguments: { title: "alice-merger-plan" } });
      const seenByAlice = (await alice.listResources()).resources.map((r) => r.name);
      assert.deepEqual(seenByAlice, ["alice-merger-plan"], "alice lists her own note");

      const bobDirect = await connect("notes", BOB);
      assert.deepEqual((await bobDirect.listResources()).resources, [], "bob has no notes");
      const bob = await connect("all", BOB);
      assert.deepEqual(
        (await bob.listResources()).resources,
        [],
        "bob, through the aggregate, sees none of alice's notes",
      );
      await bob.callTool({ name: "notes.add_note", arguments: { title: "bob-todo" } });
      const aliceAgain = await connect("all", ALICE);
      assert.ok(
        !(await aliceAgain.listResources()).resources.some((r) => r.name === "bob-todo"),
        "nor does alice see bob's",
      );
    } finally {
      await Promise.allSettled(clients.map((client) => client.close()));
      await gw.close();
    }
  });
}

Deno.test("aggregate over a share: person member: one person's list change is not told to another", async () => {
  const gw = await startGateway(config("person"));
  const clients: Client[] = [];
  try {
    const connect = async (token: string) => {
      const client = await connectClient(gw.url, "all", "streamable", token);
      clients.push(client);
      await client.listResources();
      return client;
    };
    const alice = await connect(ALICE);
    const bob = await connect(BOB);
    let aliceHeard = Promise.withResolvers<void>();
    alice.setNotificationHandler(ResourceListChangedNotificationSchema, () => aliceHeard.resolve());
    let bobHeard = 0;
    let bobHeardOne = Promise.withResolvers<void>();
    bob.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      bobHeard++;
      bobHeardOne.resolve();
    });
    const add = (client: Client, title: string) =>
      client.callTool({ name: "notes.add_note", arguments: { title } });

    await add(bob, "bob-first");
    await within("bob hears of his own first note", bobHeardOne.promise);
    bobHeardOne = Promise.withResolvers<void>();
    aliceHeard = Promise.withResolvers<void>();
    await add(alice, "alice-merger-plan");
    await within("alice hears of her note", aliceHeard.promise);
    // Bob's notices come in order on his one stream: one about alice's note would come first.
    await add(bob, "bob-second");
    await within("bob hears of his own second note", bobHeardOne.promise);
    assert.equal(bobHeard, 2, "bob heard only of his own notes, never that alice added one");
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await gw.close();
  }
});
