/**
 * The official conformance suite's authorization-server scenarios (0.2.0 pre-release) against
 * the gateway: metadata, then a full authorization code grant. The suite prints the URL a person
 * would open; the test's user agent opens it, logs in at the test IdP, consents, and lands on
 * the suite's callback server.
 */
import assert from "node:assert/strict";
import { freePort } from "./fixtures/gateway.ts";
import { authorizeInBrowser } from "./fixtures/oauth_client.ts";
import { startOAuthGateway } from "./fixtures/oauth_gateway.ts";
import { registerClient } from "./fixtures/oauth_raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

const SUITE = "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12";
const LIMIT_MS = 90_000;

Deno.test("conformance authorization: metadata endpoint and authorization code grant pass", async () => {
  const setup = await startOAuthGateway();
  const callbackPort = freePort();
  const cwd = await Deno.makeTempDir();
  try {
    const client = await registerClient(setup.url, {
      redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`],
    });
    const child = new Deno.Command("deno", {
      args: [
        "run",
        "-A",
        SUITE,
        "authorization",
        "--url",
        setup.url,
        "--client-id",
        client.client_id,
        "--resource",
        `${setup.url}/alpha`,
        "--port",
        String(callbackPort),
      ],
      cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const timer = setTimeout(() => child.kill("SIGKILL"), LIMIT_MS);
    const decoder = new TextDecoder();
    let output = "";
    const stderr = (async () => {
      for await (const chunk of child.stderr) output += decoder.decode(chunk);
    })();
    let browsed = false;
    for await (const chunk of child.stdout) {
      output += decoder.decode(chunk);
      const link = /(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/.exec(output);
      if (!link || browsed) continue;
      browsed = true;
      const callback = await authorizeInBrowser(
        new UserAgent(),
        new URL(link[1]),
        `http://127.0.0.1:${callbackPort}/callback`,
      );
      // The suite's callback server is waiting for the browser to arrive.
      const landed = await fetch(callback);
      await landed.body?.cancel();
    }
    await stderr;
    const status = await child.status;
    clearTimeout(timer);
    const results = new Map<string, string>();
    for (const match of output.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed/gm)) {
      results.set(match[1], `${match[2]} passed, ${match[3]} failed`);
    }
    assert.equal(
      results.get("authorization-server-metadata-endpoint"),
      "2 passed, 0 failed",
      output,
    );
    assert.equal(results.get("authorization-code-grant"), "1 passed, 0 failed", output);
    assert.equal(status.code, 0, output);
  } finally {
    await setup.close();
    await Deno.remove(cwd, { recursive: true });
  }
});
