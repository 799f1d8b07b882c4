import assert from "node:assert/strict";
import { KEYS_EXIT, KEYS_USAGE, parseKeysArgs, runKeysCommand } from "./keys.ts";

Deno.test("parseKeysArgs() reads rotate and list with --config, and names what is wrong", () => {
  assert.deepEqual(parseKeysArgs(["rotate"], "c.yaml"), { action: "rotate", configPath: "c.yaml" });
  assert.deepEqual(parseKeysArgs(["list", "--config=/etc/g.yaml"], "c.yaml"), {
    action: "list",
    configPath: "/etc/g.yaml",
  });
  assert.deepEqual(parseKeysArgs(["rotate", "-c", "x.yaml"], "c.yaml"), {
    action: "rotate",
    configPath: "x.yaml",
  });
  assert.deepEqual(parseKeysArgs([], "c.yaml"), { action: "help", configPath: "c.yaml" });
  assert.equal(parseKeysArgs(["spin"], "c"), 'unknown keys command "spin"; use rotate or list');
  assert.equal(parseKeysArgs(["rotate", "--now"], "c"), 'unknown argument "--now"');
  assert.equal(parseKeysArgs(["rotate", "--config"], "c"), "--config needs a value");
});

Deno.test("gatehouse keys with a bad command line prints the usage and exits 64", async () => {
  const err: string[] = [];
  const code = await runKeysCommand(["spin"], {
    loadConfig: () => Promise.reject(new Error("not reached")),
    openStore: () => Promise.reject(new Error("not reached")),
    clock: { now: () => 0 } as never,
    defaultConfigPath: "c.yaml",
    out: () => {},
    err: (line) => err.push(line),
  });
  assert.equal(code, KEYS_EXIT.usage);
  assert.ok(err[0].includes(KEYS_USAGE));
});
