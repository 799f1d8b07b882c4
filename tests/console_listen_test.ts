/**
 * `admin.listen`: the console on an address of its own, with its own sign-in at the company
 * IdP (the provider sends the browser back to the console's /callback), and nowhere on the main
 * port. Driven by the scripted user agent through the real oidc-provider.
 */
import assert from "node:assert/strict";
import { listenForGateway } from "./fixtures/gateway.ts";
import { startIdp } from "./fixtures/idp.ts";
import { TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { within } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("admin.listen serves the console on its own address with its own sign-in, and not on the main port", async () => {
  const holder: { handle?: (request: Request) => Promise<Response> } = {};
  const ready = Promise.withResolvers<number>();
  const consoleServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    (request) => holder.handle?.(request) ?? new Response("starting", { status: 503 }),
  );
  const consolePort = await ready.promise;
  const consoleUrl = `http://127.0.0.1:${consolePort}`;
  const socket = await listenForGateway();
  const idp = await startIdp([`${socket.url}/oauth/callback`, `${consoleUrl}/admin/callback`]);
  try {
    const gw = await socket.start(
      `
baseUrl: ${socket.url}
secret: ${TEST_MASTER_SECRET}
servers:
  alpha:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
oauth:
  idp:
    provider: oidc
    issuer: ${idp.issuer}
    clientId: ${idp.clientId}
    clientSecret: \${IDP_SECRET}
  allow: { domains: [example.com] }
admin:
  emails: [ops@example.com]
  listen: 127.0.0.1:${consolePort}
`,
      { IDP_SECRET: idp.clientSecret },
    );
    try {
      const console = gw.gateway.adminConsole;
      assert.ok(console, "the gateway hands serve.ts the console for its own listener");
      holder.handle = (request) => console.handle(request);

      const main = await fetch(`${socket.url}/admin`);
      assert.equal(main.status, 404);
      await main.body?.cancel();

      // The console's login cookie is its own: the gateway's, on the same host, is left alone.
      const start = await fetch(`${consoleUrl}/admin`, { redirect: "manual" });
      await start.body?.cancel();
      assert.equal(start.status, 302);
      assert.match(start.headers.get("set-cookie") ?? "", /^gatehouse_console_login=/);

      idp.loginAs = { email: "ops@example.com" };
      const ops = new UserAgent();
      const opened = await ops.follow(`${consoleUrl}/admin/people`, () => false);
      assert.equal(opened.response.status, 200, opened.body.slice(0, 400));
      assert.equal(opened.url.href, `${consoleUrl}/admin/people`);
      assert.match(opened.body, /<h1>People<\/h1>/);
      assert.ok(
        ops.visited.includes(`${consoleUrl}/admin/callback`) ||
          ops.visited.some((url) => url.startsWith(`${consoleUrl}/admin/callback?`)),
      );
      assert.ok(ops.cookies(new URL(consoleUrl)).has("gatehouse_admin"));
      assert.equal(ops.cookies(new URL(socket.url)).has("gatehouse_sso"), false);

      const csrf = /name="csrf" value="([^"]+)"/.exec(opened.body)![1];
      const signOut = (token: string, origin = consoleUrl) =>
        ops.request(`${consoleUrl}/admin/logout`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", origin },
          body: new URLSearchParams({ csrf: token }),
        });
      const foreign = await signOut(csrf, socket.url);
      assert.equal(foreign.status, 403, "the main port's origin is another origin");
      await foreign.body?.cancel();
      const done = await signOut(csrf);
      assert.equal(done.status, 200);
      assert.match(await done.text(), /You are signed out/);

      idp.loginAs = { email: "bob@example.com" };
      const bob = await new UserAgent().follow(`${consoleUrl}/admin`, () => false);
      assert.equal(bob.response.status, 403);
      assert.match(bob.body, /You are signed in as <strong><bdi>bob@example\.com/);
    } finally {
      await gw.close();
    }
  } finally {
    await idp.close();
    await within("the console listener to shut down", consoleServer.shutdown());
  }
});
