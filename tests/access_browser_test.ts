/**
 * /my/access in a real browser (Debian's Chromium, driven by playwright-core) after a real
 * sign-in at the OIDC provider: a person sees the applications they let use their tools and
 * revokes one; its token is refused and its MCP session ends; a forged or foreign revocation
 * changes nothing. Screenshots land in tests/output/screenshots/.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { launchBrowser, screenshot } from "./fixtures/browser.ts";
import { startOAuthGateway } from "./fixtures/oauth_gateway.ts";
import { exchangeCode, jwtClaims, obtainCode, registerClient } from "./fixtures/oauth_raw.ts";
import { mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { waitUntil } from "./fixtures/waits.ts";

/** `agent`'s person grants a new client named `name` the use of `server`. */
async function grant(base: string, agent: UserAgent, name: string, server: string) {
  const client = await registerClient(base, { client_name: name });
  const code = (await obtainCode(agent, base, client.client_id, `${base}/${server}`))
    .get("code")!;
  const access: string = (await exchangeCode(base, client.client_id, code)).json.access_token;
  return { access, id: jwtClaims(access).fam as string };
}

async function tools(base: string, server: string, access: string, session: string) {
  const answer = await post(
    `${base}/${server}/mcp`,
    { jsonrpc: "2.0", id: 3, method: "tools/list" },
    mcpHeaders({ authorization: `Bearer ${access}`, "mcp-session-id": session }),
  );
  return { status: answer.status, challenge: answer.headers.get("www-authenticate") ?? "" };
}

/** Every visible control has an accessible name. */
async function assertLabelled(page: Page): Promise<void> {
  const unnamed = await page.evaluate(`
    [...document.querySelectorAll("input:not([type=hidden]), button, a")]
      .filter((element) => !(element.textContent.trim() || element.getAttribute("aria-label")))
      .map((element) => element.outerHTML.slice(0, 120))
  `);
  assert.deepEqual(unnamed, []);
}

Deno.test("/my/access in Chromium: a person sees their grants, revokes one (its token and session end), and cannot revoke anyone else's", async (t) => {
  const setup = await startOAuthGateway();
  const base = setup.url;
  const browser = await launchBrowser();
  const page = await (await browser.newContext()).newPage();
  try {
    const alice = new UserAgent();
    const desktop = await grant(base, alice, "Desktop", "alpha");
    const editor = await grant(base, alice, "Editor", "beta");
    const session = await openSession(`${base}/alpha/mcp`, {
      authorization: `Bearer ${desktop.access}`,
    });
    setup.idp.loginAs = { email: "bob@example.com" };
    const bobs = await grant(base, new UserAgent(), "Bob's tool", "alpha");
    const bobSession = await openSession(`${base}/alpha/mcp`, {
      authorization: `Bearer ${bobs.access}`,
    });
    setup.idp.loginAs = { email: "alice@example.com" };

    await t.step(
      "signing in at the identity provider leads to the person's own grants",
      async () => {
        await page.goto(`${base}/my/access`);
        await page.getByRole("heading", { name: "Applications with access" }).waitFor();
        assert.equal(new URL(page.url()).pathname, "/my/access");
        await assertLabelled(page);
        await screenshot(page, "access-01-my-access");
        const desktopSection = page.locator(`#grant-${desktop.id}`);
        assert.match(
          await desktopSection.innerText(),
          /Desktop[^]*Can use: alpha[^]*Allowed \d{4}-/,
        );
        assert.match(
          await page.locator(`#grant-${editor.id}`).innerText(),
          /Editor[^]*Can use: beta/,
        );
        assert.equal(await page.locator(`#grant-${bobs.id}`).count(), 0);
        assert.ok(!(await page.content()).includes("Bob's tool"));
      },
    );

    await t.step("the other /my pages link to it", async () => {
      await page.goto(`${base}/my/tokens`);
      await page.getByRole("link", { name: "Your access" }).click();
      await page.getByRole("heading", { name: "Applications with access" }).waitFor();
    });

    await t.step(
      "Revoke ends that grant: its token is refused and its session ends; the other stays",
      async () => {
        assert.equal((await tools(base, "alpha", desktop.access, session)).status, 200);
        await page.getByRole("button", { name: "Revoke access of Desktop" }).click();
        await page.getByText("Access revoked.").waitFor();
        await screenshot(page, "access-02-revoked");
        assert.equal(await page.locator(`#grant-${desktop.id}`).count(), 0);
        assert.equal(await page.locator(`#grant-${editor.id}`).count(), 1);
        assert.match(
          (await tools(base, "alpha", desktop.access, session)).challenge,
          /this grant was revoked/,
        );
        await waitUntil(
          "the revoked grant's session to end",
          () => !setup.gw.gateway.sessions.get(session as never),
        );
      },
    );

    await t.step(
      "a form without this session's CSRF token, or naming someone else's grant, changes nothing",
      async () => {
        const csrf = await page.locator('input[name="csrf"]').first().getAttribute("value");
        assert.ok(csrf);
        const revoke = (form: Record<string, string>) =>
          page.request.post(`${base}/my/access/revoke`, { form, maxRedirects: 0 });
        const forged = await revoke({ grant: editor.id, csrf: "forged" });
        assert.equal(forged.status(), 403);
        assert.match(await forged.text(), /This form has expired/);
        const foreign = await revoke({ grant: bobs.id, csrf });
        assert.equal(foreign.status(), 403);
        await page.setContent(await foreign.text());
        await screenshot(page, "access-03-foreign-refused");
        assert.match(await page.locator("h1").innerText(), /Not one of your applications/);
        assert.equal((await tools(base, "alpha", bobs.access, bobSession)).status, 200);
        await page.goto(`${base}/my/access`);
        assert.equal(await page.locator(`#grant-${editor.id}`).count(), 1);
      },
    );
  } finally {
    await browser.close();
    await setup.close();
  }
});
