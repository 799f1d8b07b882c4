/**
 * Changing the port, as a new user does with the shipped config.yaml: `--port N` (what
 * `deno task dev -- --port N` passes) or `PORT=N` moves `listen:`, and the baseUrl left out of
 * the file follows it; an address already in use is reported naming the `listen` setting.
 * The gateway runs from a scratch folder, so the shipped file's ./data/ storage lands there.
 */
import assert from "node:assert/strict";
import { ephemeralPort } from "./fixtures/ports.ts";
import { within } from "./fixtures/waits.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const SHIPPED = new URL("../config.yaml", import.meta.url).pathname;

interface LogLine {
  msg: string;
  [field: string]: unknown;
}

/** Runs `main.ts serve` on the shipped config until it listens (then stops it) or exits. */
async function serveShipped(args: string[], env: Record<string, string> = {}) {
  const cwd = await Deno.makeTempDir({ prefix: "gatehouse-port-" });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "serve", "--config", SHIPPED, ...args],
      cwd,
      env: { NO_COLOR: "1", ...env },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let text = "";
    const reading = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({
        write(chunk) {
          text += chunk;
          if (text.includes('"gatehouse listening"')) child.kill("SIGTERM");
        },
      }),
    );
    const status = await within("the gateway to listen or give up", child.status);
    await reading.catch(() => {});
    const lines = text.split("\n").filter((line) => line.startsWith("{")).map((line) =>
      JSON.parse(line) as LogLine
    );
    return { code: status.code, lines, text };
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
}

/** The shipped config started on a port free now; tried again should another take it first. */
async function startOnFreePort(
  portArgs: (port: number) => { args: string[]; env?: Record<string, string> },
) {
  for (let attempt = 0;; attempt++) {
    const port = ephemeralPort();
    const { args, env } = portArgs(port);
    const run = await serveShipped(args, env);
    if (attempt < 3 && /AddrInUse/.test(run.text)) continue;
    return { port, ...run };
  }
}

for (
  const [how, portArgs] of [
    // As `deno task dev -- --port N` passes it, `--` and all.
    ["-- --port N", (port: number) => ({ args: ["--", "--port", String(port)] })],
    ["PORT=N", (port: number) => ({ args: [], env: { PORT: String(port) } })],
  ] as const
) {
  Deno.test(`main.ts serve on the shipped config.yaml with ${how} listens there, and baseUrl follows`, async () => {
    const { port, code, lines, text } = await startOnFreePort(portArgs);
    const listening = lines.find((line) => line.msg === "gatehouse listening");
    assert.ok(listening, text);
    assert.equal(listening.listen, `127.0.0.1:${port}`);
    assert.equal(listening.baseUrl, `http://127.0.0.1:${port}`);
    assert.equal(code, 0, text);
    assert.deepEqual(lines.filter((line) => line.msg === "configuration warning"), []);
  });
}

Deno.test("main.ts serve on an address in use says so, naming the listen setting (exit 3)", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    const { code, lines, text } = await serveShipped(["--port", String(port)]);
    assert.equal(code, 3, text);
    const failed = lines.find((line) => line.level === "error");
    assert.ok(failed, text);
    assert.equal(failed.msg, `cannot listen: 127.0.0.1:${port} (listen) is already in use`);
    assert.equal(
      failed.hint,
      "stop what listens there, or change listen in the configuration (or start with --port N)",
    );
  } finally {
    taken.close();
  }
});

Deno.test("main.ts refuses a --port that is no port (exit 64)", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "check", "--config", SHIPPED, "--port", "99999"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 64);
  assert.match(
    new TextDecoder().decode(output.stderr),
    /--port needs a port number from 0 to 65535, got 99999/,
  );
});
