/**
 * A remote MCP server (`kind: mcp`) reached by a real local client through npm:mcp-remote (the
 * stdio bridge many desktop clients use): mcp-remote signs in at Gatehouse with its own OAuth
 * (dynamic registration, PKCE, its loopback callback), the first call to the unconnected member of
 * an aggregate names the connect page, the person connects in Chromium, and the call works.
 */
import assert from "node:assert/strict";
import { launchBrowser, screenshot } from "./fixtures/browser.ts";
import { authorizeInBrowser } from "./fixtures/oauth_client.ts";
import { startRemoteGateway } from "./fixtures/remote_gateway.ts";
import { Client, StdioClientTransport } from "./fixtures/sdk.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { within } from "./fixtures/waits.ts";

const MCP_REMOTE = "npm:mcp-remote@0.15.1";

/** A port free a moment ago, for mcp-remote's OAuth callback. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Collects `stream` into `seen`; resolves with the URL after "Please authorize … visiting:". */
function authorizationUrlFrom(
  stream: { on(event: "data", listener: (chunk: Uint8Array) => void): unknown },
  seen: string[],
): Promise<URL> {
  const found = Promise.withResolvers<URL>();
  const decoder = new TextDecoder();
  stream.on("data", (chunk) => {
    seen.push(decoder.decode(chunk, { stream: true }));
    const match = /Please authorize this client by visiting:\s*\n(\S+)/.exec(seen.join(""));
    if (match) found.resolve(new URL(match[1]));
  });
  return found.promise;
}

Deno.test("kind: mcp through npm:mcp-remote: the first call names the connect page; after connecting in Chromium the call works", async () => {
  const setup = await startRemoteGateway();
  const home = await Deno.makeTempDir({ prefix: "gatehouse-mcp-remote-" });
  const bin = `${home}/bin`;
  await Deno.mkdir(bin);
  // Only deno on the PATH: mcp-remote's attempt to open a desktop browser finds nothing.
  await Deno.symlink(Deno.execPath(), `${bin}/deno`);
  const port = freePort();
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "-A", MCP_REMOTE, `${setup.url}/work/mcp`, String(port), "--allow-http"],
    cwd: home,
    env: {
      PATH: bin,
      HOME: home,
      MCP_REMOTE_CONFIG_DIR: `${home}/auth`,
      DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
      // On an empty cache Deno fetches mcp-remote first, and needs the certificate authorities
      // this machine adds (a company proxy's, say), as the test itself has them.
      ...Object.fromEntries(
        ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "DENO_CERT", "DENO_TLS_CA_STORE"]
          .flatMap((name) => Deno.env.get(name) ? [[name, Deno.env.get(name)!]] : []),
      ),
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "mcp-remote-test", version: "1.0.0" });
  const stderr: string[] = [];
  const browser = await launchBrowser();
  try {
    const connected = client.connect(transport);
    // Awaited below; a failure before then (mcp-remote ending) is reported there.
    connected.catch(() => {});
    const authorizationUrl = await within(
      "mcp-remote to print its authorization URL",
      authorizationUrlFrom(transport.stderr!, stderr),
      60_000,
    );
    // The person signs in at Gatehouse for mcp-remote (continuing past the services step).
    const agent = new UserAgent();
    setup.idp.loginAs = { email: "olga@example.com", name: "Olga" };
    const callback = await authorizeInBrowser(
      agent,
      authorizationUrl,
      `http://localhost:${port}/oauth/callback`,
    );
    await (await fetch(callback)).body?.cancel();
    await within("mcp-remote to connect through the gateway", connected, 60_000);

    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes("plain.echo"), names.join(", "));
    const failure = await client.callTool({ name: "tracker.whoami", arguments: {} }).then(
      () => assert.fail("expected the call to ask for a connection"),
      (error) => error as Error,
    );
    const page = /connect it at (\S+?), then try again/.exec(failure.message)?.[1];
    assert.equal(page, `${setup.url}/my/tokens?service=tracker`, failure.message);

    // Connecting in Chromium: the company login is automatic for the same person.
    const tab = await (await browser.newContext()).newPage();
    await tab.goto(page!);
    await tab.getByRole("link", { name: "Connect Tracker" }).click();
    await tab.getByText("Tracker is connected.").waitFor();
    await screenshot(tab, "remote-mcp-remote-connected");

    const result = await client.callTool({ name: "tracker.whoami", arguments: {} });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.equal((result.structuredContent as { sub: string }).sub, "alice");
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\nmcp-remote said:\n${stderr.join("").slice(-3000)}`,
    );
  } finally {
    await client.close().catch(() => {});
    await browser.close();
    await setup.close();
    await Deno.remove(home, { recursive: true });
  }
});
