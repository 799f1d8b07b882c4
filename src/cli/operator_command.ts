/**
 * What the operator commands (`grants`, `tools`) share: what main.ts hands them, the reading of
 * a `--flag=value` argument, and their work on the configured storage (opened, closed after,
 * and a failure said the same way by both).
 */
import type { ResolvedConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import type { Store } from "../store/store.ts";
import { showStorage } from "../core/storage_url.ts";

export interface OperatorCommandDeps {
  /** The configuration at `path`, or undefined once the loader has printed why not. */
  loadConfig(path: string): Promise<ResolvedConfig | undefined>;
  /** The configured storage; throws with a sentence saying what is wrong. */
  openStore(config: ResolvedConfig): Promise<Store>;
  clock: Clock;
  defaultConfigPath: string;
  out(line: string): void;
  err(line: string): void;
}

/** The exit code of a command whose storage could not be opened or failed under it. */
const STORAGE_UNUSABLE = 3;

/** `--name=value` as its flag and its value; any other argument as itself, with none. */
export function splitFlag(arg: string): [string, string | undefined] {
  const equals = arg.indexOf("=");
  return arg.startsWith("--") && equals >= 0
    ? [arg.slice(0, equals), arg.slice(equals + 1)]
    : [arg, undefined];
}

/**
 * Runs `work` on the configured storage and closes it after; `work`'s exit code, or 3 once
 * `gatehouse NAME` has said why the storage could not be opened or failed.
 */
export async function onStorage(
  name: string,
  config: ResolvedConfig,
  deps: OperatorCommandDeps,
  work: (store: Store) => Promise<number>,
): Promise<number> {
  let store: Store;
  try {
    store = await deps.openStore(config);
  } catch (error) {
    deps.err(
      `gatehouse ${name}: cannot open the storage ${showStorage(config.storage)}: ${
        describe(error)
      }`,
    );
    return STORAGE_UNUSABLE;
  }
  try {
    return await work(store);
  } catch (error) {
    deps.err(
      `gatehouse ${name}: the storage failed: ${
        describe(error)
      }; if the gateway is busy writing, run the command again`,
    );
    return STORAGE_UNUSABLE;
  } finally {
    store.close();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
