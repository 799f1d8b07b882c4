/**
 * The official conformance suite's authorization-server scenarios (0.2.0 pre-release) against
 * the gateway: metadata, then a full authorization code grant. The suite prints the URL a person
 * would open; the test's user agent opens it, logs in at the test IdP, consents, and lands on
 * the suite's callback server.
 */
import assert from "node:assert/strict";
import { authorizeInBrowser } from "./fixtures/oauth_client.ts";
import { startOAuthGateway } from "./fixtures/oauth_gateway.ts";
import { registerClient } from "./fixtures/oauth_raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { ephemeralPort } from "./fixtures/ports.ts";
import { within } from "./fixtures/waits.ts";

const SUITE = "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12";
const LIMIT_MS = 90_000;

/** One run of the suite, driving its sign-in; the suite's output and exit status. */
async function runSuite(
  url: string,
  clientId: string,
  callbackPort: number,
  cwd: string,
): Promise<{ output: string; code: number }> {
  const child = new Deno.Command("deno", {
    args: [
      "run",
      "-A",
      SUITE,
      "authorization",
      "--url",
      url,
      "--client-id",
      clientId,
      "--resource",
      `${url}/alpha`,
      "--port",
      String(callbackPort),
    ],
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), LIMIT_MS);
  try {
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
      const callback = await within(
        "the sign-in the suite asked for",
        authorizeInBrowser(
          new UserAgent(),
          new URL(link[1]),
          `http://127.0.0.1:${callbackPort}/callback`,
        ),
      );
      // The suite's callback server is waiting for the browser to arrive.
      const landed = await fetch(callback, { signal: AbortSignal.timeout(30_000) });
      await landed.body?.cancel();
    }
    await stderr;
    return { output, code: (await child.status).code };
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("conformance authorization: metadata endpoint and authorization code grant pass", async () => {
  const setup = await startOAuthGateway();
  const cwd = await Deno.makeTempDir();
  try {
    // A loopback redirect URI matches on any port (RFC 8252 §7.3), so one registration serves
    // every try.
    const client = await registerClient(setup.url, {
      redirect_uris: ["http://127.0.0.1:9/callback"],
    });
    let run = await runSuite(setup.url, client.client_id, ephemeralPort(), cwd);
    // The suite binds the callback port itself; should a parallel test have taken it in between,
    // run it again on another one.
    for (let again = 0; again < 3 && /EADDRINUSE/.test(run.output); again++) {
      run = await runSuite(setup.url, client.client_id, ephemeralPort(), cwd);
    }
    const { output, code } = run;
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
    assert.equal(code, 0, output);
  } finally {
    await setup.close();
    await Deno.remove(cwd, { recursive: true });
  }
});
