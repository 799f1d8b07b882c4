/**
 * Held tool calls (`approvals:`) end to end with real parts: the company IdP (oidc-provider),
 * the gateway, a real MCP server over stdio, the SDK v1 client declaring URL elicitation, a v2
 * client in 2026-07-28, and Debian's Chromium signing in and pressing Approve or Deny on
 * Gatehouse's page. Screenshots land in tests/output/screenshots/.
 */
import assert from "node:assert/strict";
import type { Browser, BrowserContext, Page } from "playwright-core";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { launchBrowser, screenshot } from "./fixtures/browser.ts";
import { listenForGateway, type TestGateway } from "./fixtures/gateway.ts";
import { startIdp, type TestIdp } from "./fixtures/idp.ts";
import { TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { connectWithOAuth } from "./fixtures/oauth_client.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { type Client, ElicitRequestSchema } from "./fixtures/sdk.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import { stdioEnvYaml } from "./fixtures/deno_dir.ts";
import { openKvStore } from "../src/store/kv.ts";
import type { Store } from "../src/store/store.ts";
import { runApprovalsCommand } from "../src/cli/approvals.ts";
import { runGrantsCommand } from "../src/cli/grants.ts";
import { ApprovalRecords } from "../src/mcp/approvals/approval_records.ts";
import { systemClock } from "../src/core/clock.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const AGENT_TOKEN = "approvals-test-agent-token-0123456789";
/** The first held call's arguments: a path, markup that must stay text, a long value folded. */
const ARGS = {
  path: "/srv/reports/q3.txt",
  note: "<b>final</b> version",
  body: "Dear customer, your quarterly report is attached. ".repeat(12).trim(),
};
const ALICE = { email: "alice@example.com", claims: { groups: ["engineers"] } };
const BOB = { email: "bob@example.com", claims: { groups: ["release-managers"] } };

interface Setup {
  gw: TestGateway;
  store: Store;
  idp: TestIdp;
  url: string;
  browser: Browser;
  close(): Promise<void>;
}

async function start(): Promise<Setup> {
  const socket = await listenForGateway();
  const url = socket.url;
  const idp = await startIdp([`${url}/oauth/callback`]);
  idp.loginAs = ALICE;
  const store = await openKvStore(":memory:");
  const gw = await socket.start(
    `
baseUrl: ${url}
secret: ${TEST_MASTER_SECRET}
servers:
  files:
    transport: stdio
    command: deno
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts", "0", "x", "destructive=delete_file", "tool=rename_file"]
    env: ${stdioEnvYaml()}
    serviceAuths: [{ type: bearer, tokens: ["\${AGENT_TOKEN}"], groups: [agents] }]
    approvals:
      - tools: [echo]
        by: caller
        timeout: 10m
      - tools: [pid]
        by: caller
        timeout: 1s
      - tools: ["*"]
        when: destructive
        by: { groups: [release-managers] }
        timeout: 10m
oauth:
  idp:
    provider: oidc
    issuer: ${idp.issuer}
    clientId: ${idp.clientId}
    clientSecret: \${IDP_SECRET}
    groupsClaim: groups
  allow:
    domains: [example.com]
`,
    { IDP_SECRET: idp.clientSecret, AGENT_TOKEN },
    { store },
  );
  const browser = await launchBrowser();
  return {
    gw,
    store,
    idp,
    url,
    browser,
    close: async () => {
      await browser.close();
      await gw.close();
      store.close();
      await idp.close();
    },
  };
}

/** Alice's SDK v1 client, signed in through OAuth, declaring URL elicitation when asked to. */
async function aliceClient(setup: Setup, urlElicitation: boolean): Promise<Client> {
  setup.idp.loginAs = ALICE;
  const { client } = await connectWithOAuth(
    new UserAgent(),
    `${setup.url}/files/mcp`,
    undefined,
    urlElicitation ? { elicitation: { form: {}, url: {} } } : {},
  );
  return client;
}

/** A browser context signed in at the company IdP as `who` (on first visit of a page). */
async function personIn(setup: Setup, who: typeof ALICE): Promise<BrowserContext> {
  setup.idp.loginAs = who;
  return await setup.browser.newContext();
}

/** Opens an approval page (signing in on the way) and presses `button` on it. */
async function decide(
  context: BrowserContext,
  url: string,
  button: "Approve" | "Deny",
  shot?: string,
): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.getByRole("heading", { name: /Approve a call of/ }).waitFor();
  if (shot) await screenshot(page, shot);
  if (shot && Deno.env.get("APPROVALS_DOC_SHOT")) {
    // The picture docs/approvals.md shows: the window only, so the committed PNG stays small.
    await page.setViewportSize({ width: 1000, height: 800 });
    await page.screenshot({
      path: new URL("../docs/approvals/page.png", import.meta.url).pathname,
    });
  }
  await page.getByRole("button", { name: button }).click();
  const notice = button === "Approve" ? "Approved. The call runs now" : "Denied.";
  await page.getByText(notice).waitFor().catch(async (error) => {
    const text = (await page.locator("body").innerText().catch(() => "")).slice(0, 600);
    throw new Error(`${(error as Error).message}\nthe browser was at ${page.url()}:\n${text}`);
  });
  return page;
}

/** `store` with a `close` that does nothing: the CLI closes what it opened, the gateway uses it still. */
function leftOpen(store: Store): Store {
  return new Proxy(store, {
    get(target, key) {
      if (key === "close") return () => {};
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** What main.ts hands an operator command, on the running gateway's own storage. */
function operatorDeps(setup: Setup) {
  return {
    loadConfig: () => Promise.resolve(setup.gw.config),
    openStore: () => Promise.resolve(leftOpen(setup.store)),
    clock: systemClock,
    defaultConfigPath: "config.yaml",
    out: () => {},
    err: () => {},
  };
}

function textOf(result: unknown): string {
  return (result as { content: { text: string }[] }).content[0].text;
}

interface RpcFailure {
  code: number;
  message: string;
  data?: { reason?: string; url: string };
}

/** The JSON-RPC error a call failed with: its code and data (the SDK's McpError). */
async function failure(
  call: Promise<unknown>,
): Promise<RpcFailure> {
  try {
    await call;
  } catch (error) {
    return error as RpcFailure;
  }
  throw new Error("the call was expected to fail");
}

Deno.test("approvals: held calls wait for a person's yes in Gatehouse's page, in every revision", async (t) => {
  const setup = await start();
  const clients: Client[] = [];
  try {
    await t.step(
      "a URL-elicitation client's call waits; the caller approves in Chromium; the result arrives",
      async () => {
        const client = await aliceClient(setup, true);
        clients.push(client);
        const alice = await personIn(setup, ALICE);
        const asked: string[] = [];
        let approving: Promise<Page> | undefined;
        client.setRequestHandler(ElicitRequestSchema, (request) => {
          const params = request.params as { mode?: string; url?: string };
          asked.push(params.url ?? "");
          assert.equal(params.mode, "url");
          approving = decide(alice, params.url!, "Approve", "approvals-01-page");
          return { action: "accept" };
        });
        const result = await within(
          "the held echo call to be approved and answered",
          client.callTool({ name: "echo", arguments: ARGS }),
        );
        assert.equal(textOf(result), JSON.stringify(ARGS));
        assert.equal(asked.length, 1);
        assert.match(asked[0], new RegExp(`^${setup.url}/approvals/[A-Za-z0-9_-]{43}$`));
        const page = await within("the approval page to settle", approving!);
        // What the tool says it does, as the server lists it; its markup shown as text, not run.
        assert.ok((await page.content()).includes("Echoes its arguments"));
        const html = await page.content();
        assert.ok(html.includes("&lt;b&gt;final&lt;/b&gt;"), "markup shown as text");
        // The client by the name it registered (tests/fixtures/oauth_client.ts), beside its id.
        assert.match(html, /<bdi>Gatehouse test client<\/bdi> \(<code>gh_[A-Za-z0-9_-]+<\/code>\)/);
        // The long value is folded: its whole text is in a <details>, shut until asked.
        assert.match(html, /<details>\s*<summary>\s*<code>Dear customer/);
        await screenshot(page, "approvals-02-approved");
        await alice.close();
        const lines = setup.gw.logs.filter((line) => line.includes('"approval_'));
        for (const event of ["requested", "approved", "executed"]) {
          assert.ok(lines.some((line) => line.includes(`"approval_${event}"`)), event);
        }
        assert.ok(
          !lines.some((line) => line.includes("/srv/reports/q3.txt")),
          "no arguments in audit",
        );
      },
    );

    await t.step("a denial ends the call with approval_denied, and it never runs", async () => {
      const client = clients[0];
      const alice = await personIn(setup, ALICE);
      let denying: Promise<Page> | undefined;
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        denying = decide(alice, (request.params as { url: string }).url, "Deny");
        return { action: "accept" };
      });
      const error = await within(
        "the denied call to end",
        failure(client.callTool({ name: "echo", arguments: { path: "/etc/passwd" } })),
      );
      assert.equal(error.data?.reason, "approval_denied");
      await within("the deny page", denying!);
      await alice.close();
    });

    await t.step("nobody decides within the timeout: approval_expired", async () => {
      const client = clients[0];
      client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept" }));
      const error = await within(
        "the held pid call to expire",
        failure(client.callTool({ name: "pid", arguments: {} })),
      );
      assert.equal(error.data?.reason, "approval_expired");
      assert.ok(setup.gw.logs.some((line) => line.includes('"approval_expired"')));
    });

    await t.step(
      "without URL elicitation: an error names the page; only the same arguments go through, once",
      async () => {
        const client = await aliceClient(setup, false);
        clients.push(client);
        const first = await failure(client.callTool({ name: "echo", arguments: { n: 1 } }));
        assert.equal(first.data?.reason, "approval_required");
        assert.ok(first.message.includes(first.data.url), first.message);
        const alice = await personIn(setup, ALICE);
        await decide(alice, first.data.url, "Approve");
        // Other arguments: not this approval; a new one is asked for.
        const other = await failure(client.callTool({ name: "echo", arguments: { n: 2 } }));
        assert.equal(other.data?.reason, "approval_required");
        assert.notEqual(other.data.url, first.data.url);
        const ran = await client.callTool({ name: "echo", arguments: { n: 1 } });
        assert.equal(textOf(ran), '{"n":1}');
        // Used once: the same call again needs a new approval.
        const again = await failure(client.callTool({ name: "echo", arguments: { n: 1 } }));
        assert.equal(again.data?.reason, "approval_required");
        assert.notEqual(again.data.url, first.data.url);
        await alice.close();
      },
    );

    await t.step(
      "by: groups: the caller cannot approve for themself; a release manager can",
      async () => {
        const client = clients[0];
        let pageUrl: string | undefined;
        const asked = Promise.withResolvers<string>();
        client.setRequestHandler(ElicitRequestSchema, (request) => {
          asked.resolve(pageUrl = (request.params as { url: string }).url);
          return { action: "accept" };
        });
        const call = client.callTool({ name: "delete_file", arguments: { path: "/srv/old" } });
        await within("the elicitation for delete_file", asked.promise);
        const alice = await personIn(setup, ALICE);
        const page = await alice.newPage();
        await page.goto(pageUrl!);
        await page.getByText("Someone else must approve this call").waitFor();
        assert.equal(await page.getByRole("button", { name: "Approve" }).count(), 0);
        await screenshot(page, "approvals-03-not-yours");
        // The form posted by hand, with Alice's own CSRF token: refused all the same.
        const csrf = await page.locator('input[name="csrf"]').first().getAttribute("value");
        const posted = await page.request.post(pageUrl!, {
          form: { csrf: csrf!, decision: "approve" },
          headers: { origin: setup.url },
        });
        assert.equal(posted.status(), 403);
        await alice.close();
        const bob = await personIn(setup, BOB);
        await decide(bob, pageUrl!, "Approve");
        const result = await within("delete_file to run once Bob approved", call);
        assert.equal(textOf(result), '{"path":"/srv/old"}');
        assert.ok(
          setup.gw.logs.some((line) =>
            line.includes('"approval_approved"') && line.includes("bob@example.com")
          ),
        );
        await bob.close();
      },
    );

    await t.step("when: destructive holds only tools annotated destructiveHint: true", async () => {
      const ran = await within(
        "rename_file to run without approval",
        clients[0].callTool({ name: "rename_file", arguments: { from: "a", to: "b" } }),
      );
      assert.equal(textOf(ran), '{"from":"a","to":"b"}');
    });

    await t.step(
      "a 2026-07-28 client gets input_required with the page; its retry carries on",
      async () => {
        const client = new V2Client(
          { name: "approvals-v2", version: "1.0.0" },
          {
            capabilities: { elicitation: { form: {}, url: {} } },
            versionNegotiation: { mode: { pin: "2026-07-28" } },
          },
        );
        const bob = await personIn(setup, BOB);
        let approving: Promise<Page> | undefined;
        const asked: string[] = [];
        client.setRequestHandler("elicitation/create", (request) => {
          const params = request.params as { mode?: string; url?: string };
          asked.push(`${params.mode} ${params.url}`);
          approving = decide(bob, params.url!, "Approve");
          return { action: "accept" };
        });
        const transport = new V2Transport(new URL(`${setup.url}/files/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${AGENT_TOKEN}` } },
        });
        await within("the v2 client to connect", client.connect(transport));
        try {
          const result = await within(
            "the 2026 call to be approved and answered",
            client.callTool({ name: "delete_file", arguments: { path: "/srv/v2" } }),
          );
          assert.equal(textOf(result), '{"path":"/srv/v2"}');
          assert.equal(asked.length, 1);
          assert.match(asked[0], /^url http:\/\/127\.0\.0\.1:\d+\/approvals\//);
          await within("Bob's approval page", approving!);
        } finally {
          await client.close();
          await bob.close();
        }
      },
    );

    await t.step("the list shows what waits for the signed-in person", async () => {
      const client = clients[1];
      const held = await failure(
        client.callTool({ name: "delete_file", arguments: { path: "/x" } }),
      );
      assert.equal(held.data?.reason, "approval_required");
      const bob = await personIn(setup, BOB);
      const page = await bob.newPage();
      await page.goto(`${setup.url}/approvals`);
      await page.getByRole("heading", { name: "Calls waiting for approval" }).waitFor();
      const link = page.getByRole("link", { name: /delete_file on files/ });
      assert.equal(await link.count(), 1);
      assert.match(await page.content(), /through <bdi>Gatehouse test client<\/bdi>/);
      await screenshot(page, "approvals-04-list");
      await bob.close();
    });

    await t.step("gatehouse approvals list and approve, on the gateway's storage", async () => {
      const client = clients[1];
      const held = await failure(client.callTool({ name: "echo", arguments: { n: 3 } }));
      assert.equal(held.data?.reason, "approval_required");
      const id = held.data!.url.split("/").pop()!;
      const run = async (...args: string[]) => {
        const out: string[] = [];
        const err: string[] = [];
        const code = await runApprovalsCommand(args, {
          ...operatorDeps(setup),
          out: (line) => out.push(line),
          err: (line) => err.push(line),
        });
        return { code, out: out.join("\n"), err: err.join("\n") };
      };
      const listed = await run("list");
      assert.equal(listed.code, 0);
      assert.ok(listed.out.includes(id) && listed.out.includes("echo"), listed.out);
      const approved = await run("approve", id);
      assert.equal(approved.code, 0, approved.err);
      assert.equal((await run("approve", id)).code, 1, "decided once");
      const ran = await client.callTool({ name: "echo", arguments: { n: 3 } });
      assert.equal(textOf(ran), '{"n":3}');
      // The gateway that held the call audits the operator's decision: there was no page to.
      assert.ok(
        setup.gw.logs.some((line) =>
          line.includes('"approval_approved"') && line.includes("operator (gatehouse approvals)") &&
          line.includes(id)
        ),
      );
    });

    await t.step("revoking the caller's grant ends the approval their call waits on", async () => {
      const client = clients[0];
      const asked = Promise.withResolvers<string>();
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.resolve((request.params as { url: string }).url);
        return { action: "accept" };
      });
      const call = failure(client.callTool({ name: "echo", arguments: { revoked: true } }));
      const id = (await within("the elicitation of the held call", asked.promise)).split("/")
        .pop()!;
      const revoked = await runGrantsCommand(
        ["revoke", "--user", ALICE.email],
        operatorDeps(setup),
      );
      assert.equal(revoked, 0);
      const records = new ApprovalRecords(setup.store, systemClock);
      await waitUntil(
        "the approval to end with the grant",
        async () => (await records.get(id))?.status === "ended",
      );
      assert.equal((await records.get(id))?.endedBecause, "the caller's access was revoked");
      await within("the waiting call to end", call);
    });

    await t.step("metrics count each outcome", async () => {
      await waitUntil(
        "the executed count",
        () =>
          setup.gw.gateway.metrics().includes(
            'gatehouse_approvals_total{server="files",outcome="executed"}',
          ),
      );
      const metrics = setup.gw.gateway.metrics();
      for (const outcome of ["requested", "approved", "denied", "expired", "executed"]) {
        assert.ok(metrics.includes(`outcome="${outcome}"`), `${outcome} in\n${metrics}`);
      }
    });
  } finally {
    for (const client of clients) await client.close().catch(() => {});
    await setup.close();
  }
});
