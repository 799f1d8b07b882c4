/**
 * Remote MCP servers (`kind: mcp`) with real clients and a real browser: a call to a remote
 * server the person has not connected is told the page to open (a 2026-07-28 call as
 * `input_required` with a URL elicitation, the v2 SDK client of either revision, which declares
 * no URL elicitation, as an error naming it), the person connects their account in Chromium (Gatehouse registers itself at the
 * server's authorization server on the way), and the v2 SDK client's call then works in both
 * revisions.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { authorizeWithBrowser, launchBrowser, screenshot } from "./fixtures/browser.ts";
import { connectWithOAuthVia, MemoryOAuthProvider, REDIRECT_URI } from "./fixtures/oauth_client.ts";
import { startRemoteGateway } from "./fixtures/remote_gateway.ts";
import { connectV2Client, type Negotiation } from "./fixtures/v2_client.ts";

/** The page a refusal names (the message ends "…at <url>, then try again"). */
function pageIn(message: string): string {
  const url = /at (http\S+?\/my\/tokens\?service=tracker)/.exec(message)?.[1];
  assert.ok(url, `no page in: ${message}`);
  return url;
}

/** A whoami through the v2 client: its structured result, or the error it threw. */
async function v2Whoami(url: string, token: string, negotiation: Negotiation) {
  try {
    const v2 = await connectV2Client(url, { negotiation, token });
    try {
      const result = await v2.client.callTool({ name: "whoami", arguments: {} });
      if (result.isError) return new Error(JSON.stringify(result.content));
      return result.structuredContent as { sub: string };
    } finally {
      await v2.close();
    }
  } catch (error) {
    return error as Error;
  }
}

/** A 2026-07-28 tools/call from a client that can open URLs, as raw HTTP. */
async function modernCall(url: string, token: string) {
  const answer = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "whoami",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "whoami",
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {}, url: {} } },
        },
      },
    }),
  });
  assert.equal(answer.status, 200);
  return await answer.json();
}

async function connectInBrowser(page: Page, url: string, shot: string): Promise<void> {
  await page.goto(url);
  await page.getByRole("heading", { name: "Your connections" }).waitFor();
  await page.getByRole("link", { name: /^(Connect|Reconnect) Tracker$/ }).click();
  await page.getByText("Tracker is connected.").waitFor();
  await screenshot(page, shot);
}

Deno.test("kind: mcp in Chromium with the v2 SDK client (2026-07-28 and 2025-11-25): the first call names the page, the person connects there, the call works", async () => {
  const setup = await startRemoteGateway();
  const browser = await launchBrowser();
  const page = await (await browser.newContext()).newPage();
  try {
    // The MCP client signs in; the services step offers Tracker, and the person skips it.
    const provider = new MemoryOAuthProvider();
    await connectWithOAuthVia(
      (url) =>
        authorizeWithBrowser(page, url, REDIRECT_URI, async (page) => {
          await page.getByRole("button", { name: "Allow" }).click();
          await page.getByRole("heading", { name: "Connect your services" }).waitFor();
          await page.getByRole("link", { name: "Connect Tracker" }).waitFor();
          await screenshot(page, "remote-01-services-step");
          await page.getByRole("link", { name: "Continue without connecting" }).click();
        }),
      `${setup.url}/tracker/mcp`,
      provider,
    ).catch(() => {/* its session is refused until Tracker is connected: below */});
    const token = provider.savedTokens!.access_token;
    const endpoint = `${setup.url}/tracker/mcp`;

    // The v2 client pinned to 2026-07-28 connects (server/discover says where to connect, and
    // that nothing is to be cached), and its call is told the page.
    const early = await v2Whoami(endpoint, token, "pinned");
    assert.ok(early instanceof Error, JSON.stringify(early));
    assert.equal(pageIn(early.message), `${setup.url}/my/tokens?service=tracker`);
    // A 2026-07-28 call that can open URLs is answered input_required with the page.
    const asked = await modernCall(endpoint, token);
    assert.equal(asked.result?.resultType, "input_required", JSON.stringify(asked));
    const elicitation = asked.result.inputRequests.connect.params;
    assert.equal(elicitation.mode, "url");
    assert.equal(elicitation.url, `${setup.url}/my/tokens?service=tracker`);
    await connectInBrowser(page, elicitation.url, "remote-02-connected");
    assert.equal(setup.as.registrations, 1);
    const pinned = await v2Whoami(endpoint, token, "pinned");
    assert.ok(!(pinned instanceof Error), String(pinned));
    assert.equal(pinned.sub, "alice");

    // Disconnected: the v2 client in a 2025-11-25 session is told the page; after connecting
    // again there, its call works too.
    await page.goto(`${setup.url}/my/tokens`);
    await page.getByRole("button", { name: "Disconnect" }).click();
    await page.getByText(/Tracker is disconnected/).waitFor();
    await screenshot(page, "remote-03-disconnected");
    const refused = await v2Whoami(endpoint, token, "legacy");
    assert.ok(refused instanceof Error, JSON.stringify(refused));
    assert.match(refused.message, /Tracker needs your own credential/);
    await connectInBrowser(page, pageIn(refused.message), "remote-04-reconnected");
    const legacy = await v2Whoami(endpoint, token, "legacy");
    assert.ok(!(legacy instanceof Error), String(legacy));
    assert.equal(legacy.sub, "alice");
    assert.equal(setup.as.registrations, 1);
    assert.ok(setup.as.revocations >= 1);
  } finally {
    await browser.close();
    await setup.close();
  }
});
