/**
 * `gatehouse keys rotate|list`: the ES256 keys that sign identity assertions to backends
 * (docs/identity.md), on the configured storage while the gateways run on it. `rotate` makes a
 * new signing key, published at /.well-known/gatehouse/jwks.json at once and signing once every
 * backend's cached copy can have it; the one it replaces signs until then and stays published
 * until every assertion it signed has expired, so backends verify both meanwhile.
 */
import { Secret } from "../core/secret.ts";
import {
  AssertionKeys,
  KEY_ACTIVATION_MS,
  PUBLISHED_AFTER_RETIREMENT_MS,
} from "../credentials/assertion_keys.ts";
import { deriveAesKey } from "../crypto/keys.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import type { ResolvedConfig } from "../config/types.ts";
import { onStorage, type OperatorCommandDeps, splitFlag } from "./operator_command.ts";

export const KEYS_USAGE = `Usage:
  gatehouse keys rotate [--config PATH]
      make a new key for signing identity assertions (identity.assertion); it is
      published at /.well-known/gatehouse/jwks.json at once and signs ${
  KEY_ACTIVATION_MS / 60_000
} minutes later,
      once every backend's cached key set has it. The previous key signs until then
      and stays published for ${
  PUBLISHED_AFTER_RETIREMENT_MS / 60_000
} more minutes, until every assertion it signed
      has expired.
  gatehouse keys list [--config PATH]
      the key ids published now, the newest first

The storage is the one the configuration names (PATH, else $GATEHOUSE_CONFIG, else
./config.yaml); run it where the gateway runs, as the user it runs as.

Exit codes: 0 ok, 64 bad command line, 78 invalid configuration, 3 storage unusable.`;

export const KEYS_EXIT = { ok: 0, usage: 64, invalidConfig: 78, runtime: 3 } as const;

/** Parses what follows `keys`; a string is the complaint for a bad command line. */
export function parseKeysArgs(
  args: string[],
  defaultConfigPath: string,
): { action: "rotate" | "list" | "help"; configPath: string } | string {
  const [action, ...rest] = args;
  let configPath = defaultConfigPath;
  if (action === undefined || action === "--help" || action === "-h") {
    return { action: "help", configPath };
  }
  if (action !== "rotate" && action !== "list") {
    return `unknown keys command "${action}"; use rotate or list`;
  }
  for (let i = 0; i < rest.length; i++) {
    const [flag, inline] = splitFlag(rest[i]);
    if (flag === "--help" || flag === "-h") return { action: "help", configPath };
    if (flag !== "--config" && flag !== "-c") return `unknown argument "${rest[i]}"`;
    const given = inline ?? rest[++i];
    if (!given || given.startsWith("--")) return `${flag} needs a value`;
    configPath = given;
  }
  return { action, configPath };
}

/** Runs `gatehouse keys …`; returns the exit code. */
export async function runKeysCommand(args: string[], deps: OperatorCommandDeps): Promise<number> {
  const command = parseKeysArgs(args, deps.defaultConfigPath);
  if (typeof command === "string") {
    deps.err(`gatehouse keys: ${command}\n\n${KEYS_USAGE}`);
    return KEYS_EXIT.usage;
  }
  if (command.action === "help") {
    deps.out(KEYS_USAGE);
    return KEYS_EXIT.ok;
  }
  const config = await deps.loadConfig(command.configPath);
  if (!config) return KEYS_EXIT.invalidConfig;
  return await onStorage("keys", config, deps, async (store) => {
    const keys = await assertionKeys(config, store, deps);
    if (command.action === "list") {
      for (const key of await keys.published()) deps.out(key.kid);
      return KEYS_EXIT.ok;
    }
    const { kid, signsFrom, previous } = await keys.rotate();
    deps.out(
      `signing with ${kid} from ${
        new Date(signsFrom).toISOString()
      } (published now; every replica within 30 seconds of that)`,
    );
    if (previous.length > 0) {
      deps.out(
        `still published until their assertions have expired: ${previous.join(", ")}`,
      );
    }
    return KEYS_EXIT.ok;
  });
}

/** The keys as the gateway keeps them: sealed under the master secret it runs with. */
async function assertionKeys(
  config: ResolvedConfig,
  store: Store,
  deps: OperatorCommandDeps,
): Promise<AssertionKeys> {
  // A gateway without `secret:` generated one and keeps it in storage (app.ts).
  const stored = config.secret ? undefined : await store.get<string>(KEYS.masterSecret);
  const master = config.secret ?? (stored === undefined ? undefined : new Secret(stored));
  if (!master) {
    throw new Error(
      "no master secret: the configuration gives none and the storage holds none; start the gateway once first",
    );
  }
  const sealKeys = await Promise.all(
    [master, ...config.previousSecrets].map((secret) => deriveAesKey(secret, "assertion-keys")),
  );
  return new AssertionKeys({ store, sealKeys, clock: deps.clock });
}
