/**
 * The deployment files agree with the code: the systemd unit and the Dockerfile run the gateway
 * with the compiled binary's permissions, reload with SIGHUP, never restart into a bad
 * configuration, run as a non-root user, and check health with the `health` command. (Neither
 * systemd nor Docker runs here; docs/deploy.md says how they were meant to be used.)
 */
import assert from "node:assert/strict";
import { EXIT } from "../main.ts";
import { RUNTIME_PERMISSIONS } from "../scripts/compile.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** The unit's settings: each key with every value it is given, in order. */
function unitSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith("[")) continue;
    const at = line.indexOf("=");
    assert.ok(at > 0, `not a setting: ${line}`);
    const key = line.slice(0, at);
    settings.set(key, [...settings.get(key) ?? [], line.slice(at + 1)]);
  }
  return settings;
}

Deno.test("the systemd unit is hardened, reloads with SIGHUP and never restarts into a bad configuration", () => {
  const unit = unitSettings(Deno.readTextFileSync(`${ROOT}deploy/gatehouse.service`));
  const one = (key: string) => {
    const values = unit.get(key);
    assert.equal(values?.length, 1, `${key} should be set once`);
    return values![0];
  };
  assert.equal(one("User"), "gatehouse");
  assert.equal(
    one("ExecStart"),
    "/usr/local/bin/gatehouse serve --config /etc/gatehouse/config.yaml",
  );
  assert.equal(one("ExecReload"), "/bin/kill -HUP $MAINPID");
  assert.equal(one("EnvironmentFile"), "/etc/gatehouse/gatehouse.env");
  assert.equal(one("StateDirectory"), "gatehouse");
  assert.equal(one("Restart"), "on-failure");
  assert.deepEqual(
    one("RestartPreventExitStatus").split(" ").map(Number),
    [EXIT.invalidConfig, EXIT.usage],
  );
  for (
    const [key, value] of Object.entries({
      NoNewPrivileges: "yes",
      ProtectSystem: "strict",
      ProtectHome: "yes",
      PrivateTmp: "yes",
      // Ports 443 and 80 for HTTPS without a proxy (tls:), and nothing more.
      CapabilityBoundingSet: "CAP_NET_BIND_SERVICE",
      AmbientCapabilities: "CAP_NET_BIND_SERVICE",
    })
  ) {
    assert.equal(one(key), value, key);
  }
  // The gateway's own stop grace (10 s by default) must fit in systemd's.
  assert.ok(parseInt(one("TimeoutStopSec")) > 10);
});

Deno.test("the Dockerfile runs on the official Deno image as a non-root user with the binary's permissions", () => {
  const text = Deno.readTextFileSync(`${ROOT}Dockerfile`);
  const ci = Deno.readTextFileSync(`${ROOT}.ci/run`);
  const version = /FROM denoland\/deno:(\S+)/.exec(text)?.[1];
  assert.ok(version && ci.includes(`deno@${version}`), "the image's Deno is the one CI tests");
  const lines = text.split("\n");
  const user = lines.findIndex((l) => /^USER deno$/.test(l));
  const entry = lines.findIndex((l) => l.startsWith("ENTRYPOINT"));
  assert.ok(user > 0 && user < entry, "USER deno comes before the entrypoint");
  const entrypoint = JSON.parse(lines[entry].slice("ENTRYPOINT".length)) as string[];
  assert.deepEqual(entrypoint, ["deno", "run", ...RUNTIME_PERMISSIONS, "main.ts"]);
  const health = lines.findIndex((l) => l.startsWith("HEALTHCHECK"));
  assert.match(lines[health + 1], /"main\.ts", "health"\]$/);
});
