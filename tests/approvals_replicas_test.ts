/**
 * Held tool calls across replicas on one real PostgreSQL: two gateways share the database, as
 * behind a load balancer. A call held on A and approved by an operator on the shared storage
 * (what `gatehouse approvals approve` does) goes through once when the client retries on B; two
 * retries racing on A and B with one approval run the tool once; a denial made beside B ends
 * the call waiting on A. The backend is one real SDK server both replicas reach over HTTP, and
 * it counts the calls that reached it.
 */
import assert from "node:assert/strict";
import { listenForGateway, type TestGateway } from "./fixtures/gateway.ts";
import { startIdp, type TestIdp } from "./fixtures/idp.ts";
import { idpSection, TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { connectClient } from "./fixtures/client.ts";
import { type ChangingTools, startChangingTools } from "./fixtures/changing_tools.ts";
import { Client, ElicitRequestSchema, StreamableHTTPClientTransport } from "./fixtures/sdk.ts";
import { sharedPostgres } from "./fixtures/postgres.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { csrfOf } from "./fixtures/credential_gateway.ts";
import { openPostgresStore } from "../src/store/postgres.ts";
import type { Store } from "../src/store/store.ts";
import { ApprovalRecords, OPERATOR_DECIDER } from "../src/mcp/approvals/approval_records.ts";
import { systemClock } from "../src/core/clock.ts";

const ANN = "replicas-test-token-ann-0123456789abcdef";

interface RpcFailure {
  code: number;
  message: string;
  data?: { reason?: string; approval?: string };
}

async function failure(call: Promise<unknown>): Promise<RpcFailure> {
  try {
    await call;
  } catch (error) {
    return error as RpcFailure;
  }
  throw new Error("the call was expected to fail");
}

Deno.test("approvals across two replicas on PostgreSQL: approved on the shared storage, run once, denied on the other", async (t) => {
  const { url } = await sharedPostgres();
  const vendor: ChangingTools = await startChangingTools({
    deploy: { description: "Deploys a release" },
  });
  const sockets = [await listenForGateway(), await listenForGateway()];
  const idp: TestIdp = await startIdp([`${sockets[0].url}/oauth/callback`]);
  const yaml = `
baseUrl: ${sockets[0].url}
storage: ${url}
secret: ${TEST_MASTER_SECRET}
servers:
  vendor:
    transport: streamable-http
    url: ${vendor.url}
    serviceAuths: [{ type: bearer, tokens: ["\${ANN}"] }]
    approvals:
      - tools: [deploy]
        by: caller
  guarded:
    transport: streamable-http
    url: ${vendor.url}
    serviceAuths: [{ type: bearer, tokens: ["\${ANN}"] }]
    approvals:
      - tools: [deploy]
        by: { groups: [release-managers] }
oauth:
${idpSection(idp).replace("\n  allow:", "\n    groupsClaim: groups\n  allow:")}
`;
  const replicas: TestGateway[] = [];
  const clients: Client[] = [];
  // The operator's own handle on the database, as `gatehouse approvals` opens it.
  const operator: Store = await openPostgresStore(url);
  const records = new ApprovalRecords(operator, systemClock);
  const decide = async (held: RpcFailure | string, to: "approved" | "denied") => {
    const id = typeof held === "string" ? held : held.data?.approval;
    assert.ok(id, `a held call names its approval: ${JSON.stringify(held)}`);
    const done = await records.move(id, ["pending"], to, {
      decidedBy: OPERATOR_DECIDER,
      decidedAt: systemClock.now(),
    });
    assert.ok(done, "the approval was pending");
  };
  try {
    for (const socket of sockets) {
      replicas.push(
        await socket.start(yaml, { IDP_SECRET: idp.clientSecret, ANN }, { storage: url }),
      );
    }
    const [onA, onB] = await Promise.all(replicas.map(async (gw) => {
      const client = await within(
        `a client of ${gw.url}`,
        connectClient(gw.url, "vendor", "streamable", ANN),
      );
      clients.push(client);
      return client;
    }));

    await t.step("held on A, approved on the shared storage, retried on B: runs once", async () => {
      const held = await failure(onA.callTool({ name: "deploy", arguments: { v: 1 } }));
      assert.equal(held.data?.reason, "approval_required", held.message);
      assert.deepEqual(vendor.calls, [], "a held call never reaches the server");
      await decide(held, "approved");
      const ran = await within(
        "the approved retry on B",
        onB.callTool({ name: "deploy", arguments: { v: 1 } }),
      );
      assert.equal((ran as { content: { text: string }[] }).content[0].text, "deploy ran");
      assert.deepEqual(vendor.calls, ["deploy"]);
      // Used once: the same call again, on either replica, asks anew.
      const again = await failure(onA.callTool({ name: "deploy", arguments: { v: 1 } }));
      assert.equal(again.data?.reason, "approval_required");
      assert.notEqual(again.data?.approval, held.data?.approval);
      assert.deepEqual(vendor.calls, ["deploy"]);
      await decide(again, "denied");
    });

    await t.step(
      "two retries racing on A and B with one approval: the tool runs once",
      async () => {
        for (let round = 0; round < 40; round++) {
          const args = { race: round };
          const held = await failure(onA.callTool({ name: "deploy", arguments: args }));
          assert.equal(held.data?.reason, "approval_required", held.message);
          await decide(held, "approved");
          const before = vendor.calls.length;
          const outcomes = await within(
            `the two racing retries of round ${round}`,
            Promise.allSettled([
              onA.callTool({ name: "deploy", arguments: args }),
              onB.callTool({ name: "deploy", arguments: args }),
            ]),
          );
          const ran = outcomes.filter((o) => o.status === "fulfilled");
          assert.equal(ran.length, 1, `round ${round}: ${JSON.stringify(outcomes)}`);
          assert.equal(vendor.calls.length, before + 1, `round ${round}: the backend ran it once`);
          const lost = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
          // The loser is told the approval is spent (it met the record approved) or asked for a
          // new one (it met it used): never that the call was denied.
          const loser = lost.reason as RpcFailure;
          if (loser.data?.reason === "approval_required") await decide(loser, "denied");
          else {
            assert.equal(loser.data?.reason, "approval_refused", loser.message);
            assert.match(loser.message, /already used.*call again/);
          }
        }
      },
    );

    await t.step(
      "held on A, approved on B's page by a release manager: the retry on A runs once",
      async () => {
        const guarded = await within(
          "a client of guarded on A",
          connectClient(replicas[0].url, "guarded", "streamable", ANN),
        );
        clients.push(guarded);
        const held = await failure(guarded.callTool({ name: "deploy", arguments: { page: 1 } }));
        assert.equal(held.data?.reason, "approval_required", held.message);
        // The browser sees one address; the balancer sends this page and its POST to B.
        idp.loginAs = { email: "bob@example.com", claims: { groups: ["release-managers"] } };
        const bob = new UserAgent();
        bob.shareCookies(new URL(replicas[0].url), new URL(replicas[1].url));
        const pageUrl = `${replicas[1].url}/approvals/${held.data!.approval}`;
        const page = await bob.follow(pageUrl, () => false);
        assert.equal(page.response.status, 200, page.body.slice(0, 300));
        assert.match(page.body, /Approve a call of/);
        const decided = await bob.request(pageUrl, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ csrf: csrfOf(page.body), decision: "approve" }),
        });
        await decided.body?.cancel();
        assert.equal(decided.status, 303);
        assert.equal((await records.get(held.data!.approval!))?.status, "approved");
        const before = vendor.calls.length;
        const ran = await within(
          "the retry on A after B's page approved it",
          guarded.callTool({ name: "deploy", arguments: { page: 1 } }),
        );
        assert.equal((ran as { content: { text: string }[] }).content[0].text, "deploy ran");
        assert.equal(vendor.calls.length, before + 1);
      },
    );

    await t.step("a denial made beside B ends the call waiting on A", async () => {
      const waiting = new Client(
        { name: "replicas-url-elicitation", version: "1.0.0" },
        { capabilities: { elicitation: { form: {}, url: {} } } },
      );
      const asked = Promise.withResolvers<string>();
      waiting.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.resolve((request.params as { url: string }).url);
        return { action: "accept" };
      });
      await within(
        "the URL-elicitation client to connect to A",
        waiting.connect(
          new StreamableHTTPClientTransport(new URL(`${replicas[0].url}/vendor/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${ANN}` } },
          }),
        ),
      );
      clients.push(waiting);
      const before = vendor.calls.length;
      const call = failure(waiting.callTool({ name: "deploy", arguments: { deny: true } }));
      const page = await within("the elicitation of the held call on A", asked.promise);
      const id = new URL(page).pathname.split("/").pop()!;
      await waitUntil(
        "the held call to be on record",
        async () => (await records.get(id))?.status === "pending",
      );
      await decide(id, "denied");
      const ended = await within("the call on A to end with the denial", call);
      assert.equal(ended.data?.reason, "approval_denied", ended.message);
      assert.equal(vendor.calls.length, before, "a denied call never reaches the server");
    });
  } finally {
    for (const client of clients) await client.close().catch(() => {});
    for (const replica of replicas) await replica.close();
    for (const socket of sockets.slice(replicas.length)) await socket.close();
    operator.close();
    await vendor.close();
    await idp.close();
  }
});
