/**
 * The credential pages in a real browser (Debian's Chromium, driven by playwright-core): an
 * MCP client's sign-in through the services step, connecting a service account at a second
 * OAuth provider, manual tokens on /my/tokens, CSRF refusals, disconnecting and signing out.
 * Screenshots of each page land in tests/output/screenshots/.
 */
import assert from "node:assert/strict";
import {
  assertLabelled,
  authorizeWithBrowser,
  launchBrowser,
  screenshot,
} from "./fixtures/browser.ts";
import { type CredentialSetup, startCredentialGateway } from "./fixtures/credential_gateway.ts";
import { connectWithOAuthVia, MemoryOAuthProvider, REDIRECT_URI } from "./fixtures/oauth_client.ts";
import type { Client } from "./fixtures/sdk.ts";

interface Echo {
  env: Record<string, string>;
  headers: Record<string, string>;
}

async function echo(client: Client, tool: string): Promise<Echo> {
  const result = await client.callTool({ name: tool, arguments: {} });
  return result.structuredContent as unknown as Echo;
}

async function linearAccountOf(setup: CredentialSetup, token: string): Promise<number | string> {
  const response = await fetch(`${setup.linear.issuer}/me`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    return response.status;
  }
  return (await response.json()).sub;
}

Deno.test("credential pages in Chromium: sign-in with the services step, manual tokens, CSRF, disconnect, sign-out", async (t) => {
  const setup = await startCredentialGateway();
  const browser = await launchBrowser();
  const context = await browser.newContext();
  const page = await context.newPage();
  let client: Client | undefined;
  try {
    await t.step(
      "an MCP client signs in, the person connects Linear and adds a Notion token on the services step, and the backends get exactly those",
      async () => {
        const provider = new MemoryOAuthProvider();
        ({ client } = await connectWithOAuthVia(
          (url) =>
            authorizeWithBrowser(page, url, REDIRECT_URI, async (page) => {
              await page.getByRole("heading", { name: /Allow .* to use your tools\?/ }).waitFor();
              await screenshot(page, "01-consent");
              await page.getByRole("button", { name: "Allow" }).click();

              await page.getByRole("heading", { name: "Connect your services" }).waitFor();
              await assertLabelled(page);
              await screenshot(page, "02-services-step");
              await page.getByRole("link", { name: "Connect Linear" }).click();

              await page.getByText("Linear is connected.").waitFor();
              await screenshot(page, "03-services-step-linear-connected");
              await page.getByLabel("Your Notion token").fill("ntn_alice_first_0123456789");
              await page.getByRole("button", { name: "Save token" }).click();

              await page.getByText("Your Notion token is saved.").waitFor();
              await screenshot(page, "04-services-step-all-connected");
              await page.getByRole("link", { name: "Continue", exact: true }).click();
            }),
          `${setup.url}/work/mcp`,
          provider,
        ));
        const names = (await client.listTools()).tools.map((tool) => tool.name);
        assert.ok(names.includes("linear.echo_environment"), names.join(", "));
        assert.ok(names.includes("notion.echo_environment"), names.join(", "));
        const linearToken = (await echo(client, "linear.echo_environment")).env.SERVICE_TOKEN;
        assert.equal(await linearAccountOf(setup, linearToken), "alice-linear-example");
        assert.equal(
          (await echo(client, "notion.echo_environment")).headers.authorization,
          "Bearer ntn_alice_first_0123456789",
        );
      },
    );

    await t.step(
      "/my/tokens: a token failing the pattern is refused and shown; update and delete work",
      async () => {
        await page.goto(`${setup.url}/my/tokens`);
        await page.getByRole("heading", { name: "Your connections" }).waitFor();
        await assertLabelled(page);
        await screenshot(page, "05-my-tokens");
        const notion = page.locator("#service-notion");
        assert.match(await notion.innerText(), /Token ending in …6789/);
        assert.ok(!(await page.content()).includes("ntn_alice_first"));

        await page.getByLabel("Replace your Notion token").fill("not-a-notion-token");
        await page.getByRole("button", { name: "Update token" }).click();
        const refusal = page.getByRole("alert");
        await refusal.waitFor();
        assert.match(await refusal.innerText(), /That does not look like a Notion token/);
        await screenshot(page, "06-my-tokens-pattern-refused");
        assert.match(await notion.innerText(), /Token ending in …6789/);

        await page.getByLabel("Replace your Notion token").fill("ntn_alice_second_abcdefWXYZ");
        await page.getByRole("button", { name: "Update token" }).click();
        await page.getByText("Your Notion token is saved.").waitFor();
        assert.match(await notion.innerText(), /Token ending in …WXYZ/);
        await screenshot(page, "07-my-tokens-updated");
        assert.equal(
          (await echo(client!, "notion.echo_environment")).headers.authorization,
          "Bearer ntn_alice_second_abcdefWXYZ",
        );

        await notion.getByRole("button", { name: "Delete token" }).click();
        await page.getByText("Your Notion token is deleted.").waitFor();
        assert.match(await notion.innerText(), /No token/);
        await screenshot(page, "08-my-tokens-deleted");
        const failure = await echo(client!, "notion.echo_environment").then(
          () => assert.fail("expected the call to be refused"),
          (error) => error as Error,
        );
        assert.match(failure.message, new RegExp(`${setup.url}/my/tokens\\?service=notion`));
      },
    );

    await t.step(
      "forms without this session's CSRF token are refused and change nothing",
      async () => {
        const form = (csrf?: string) => ({
          form: {
            service: "notion",
            token: "ntn_forged_0123456789abcd",
            next: "tokens",
            ...(csrf !== undefined && { csrf }),
          },
        });
        const missing = await page.request.post(`${setup.url}/my/tokens/set`, form());
        assert.equal(missing.status(), 403);
        assert.match(await missing.text(), /This form has expired/);

        // Bob's own page gives him a valid token for his session, not for Alice's.
        setup.idp.loginAs = { email: "bob@example.com" };
        const bob = await (await browser.newContext()).newPage();
        await bob.goto(`${setup.url}/my/tokens`);
        const bobsCsrf = await bob.locator('input[name="csrf"]').first().getAttribute("value");
        assert.ok(bobsCsrf);
        const foreign = await page.request.post(`${setup.url}/my/tokens/set`, form(bobsCsrf));
        assert.equal(foreign.status(), 403);
        await page.setContent(await foreign.text());
        await screenshot(page, "09-csrf-refused");

        await page.goto(`${setup.url}/my/tokens`);
        assert.match(await page.locator("#service-notion").innerText(), /No token/);
        await bob.context().close();
      },
    );

    await t.step("disconnecting Linear revokes the grant at Linear", async () => {
      const token = (await echo(client!, "linear.echo_environment")).env.SERVICE_TOKEN;
      await page.goto(`${setup.url}/my/tokens`);
      await page.locator("#service-linear").getByRole("button", { name: "Disconnect" }).click();
      await page.getByText("Linear is disconnected, and its access was revoked at Linear.")
        .waitFor();
      await screenshot(page, "10-my-tokens-linear-disconnected");
      assert.match(await page.locator("#service-linear").innerText(), /Not connected/);
      assert.ok(setup.linear.revocations >= 1);
      assert.equal(await linearAccountOf(setup, token), 401);
    });

    await t.step(
      "signing out: a link or a form from another site changes nothing; the Sign out button ends the sign-in, and the old cookie no longer works",
      async () => {
        const ssoCookie = async () =>
          (await context.cookies(setup.url)).find((c) => c.name === "gatehouse_sso")?.value;
        const cookie = await ssoCookie();
        assert.ok(cookie, "signed in");
        // What a browser replaying the cookie gets from /my/tokens: the page, or the login.
        const replay = async () => {
          const response = await fetch(`${setup.url}/my/tokens`, {
            headers: { cookie: `gatehouse_sso=${cookie}` },
            redirect: "manual",
          });
          await response.body?.cancel();
          return response.status === 200
            ? "signed in"
            : `${response.status} to ${response.headers.get("location")?.split("?")[0]}`;
        };
        assert.equal(await replay(), "signed in");

        // Another site (localhost is not the site 127.0.0.1): a link to the logout URL, which
        // a top-level navigation follows with the cookie, then a form posted to it.
        const logout = `${setup.url}/logout`;
        const forged = (body: string) =>
          page.route(
            "http://localhost:9/forged",
            (route) => route.fulfill({ contentType: "text/html", body }),
            { times: 1 },
          );
        await forged(`<a href="${logout}">win a prize</a>`);
        await page.goto("http://localhost:9/forged");
        const heading = page.getByRole("heading", { level: 1 });
        await page.getByRole("link", { name: "win a prize" }).click();
        await page.waitForURL(logout);
        assert.equal(await ssoCookie(), cookie, "a GET leaves the browser its cookie");
        assert.equal(await heading.innerText(), "Sign out of Gatehouse?");
        await forged(`<img src="${logout}" alt="" onerror="document.forms[0].submit()">
          <form method="post" action="${logout}"><input name="csrf" value="forged"></form>`);
        await page.goto("http://localhost:9/forged");
        await page.waitForURL(logout);
        assert.equal(await ssoCookie(), cookie, "a forged form leaves the browser its cookie");
        assert.equal(await heading.innerText(), "You were not signed out");
        await screenshot(page, "11-forged-logout-refused");
        assert.equal(await replay(), "signed in");

        await page.goto(`${setup.url}/my/tokens`);
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.getByRole("heading", { name: "You are signed out" }).waitFor();
        await screenshot(page, "12-signed-out");
        assert.equal(await ssoCookie(), undefined, "the cookie is cleared");
        assert.equal(
          await replay(),
          `302 to ${setup.idp.issuer}/auth`,
          "the old cookie, replayed, must sign in again",
        );
      },
    );
  } finally {
    await client?.close();
    await browser.close();
    await setup.close();
  }
});
