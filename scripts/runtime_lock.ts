/**
 * `deno task lock`: writes deno.runtime.lock, the part of deno.lock the gateway itself needs.
 *
 * deno.lock pins everything the project uses, tests and bench included (a browser driver, an
 * identity provider, the stdio peers); Deno installs every package of the lockfile it is given,
 * so a user's `deno task dev` would fetch all of it, and warn about build scripts it ignores.
 * The gateway's tasks run with `--lock=deno.runtime.lock --frozen` instead: the same versions
 * (this file is cut from deno.lock, never resolved anew), only the gateway's packages.
 * tests/runtime_lock_test.ts keeps it in step with deno.lock and with what main.ts imports.
 */

/** The import-map entries the gateway's code imports (tests and bench import the rest). */
export const RUNTIME_IMPORTS = [
  "@modelcontextprotocol/sdk",
  "@opentelemetry/api",
  "hono",
  "oauth4webapi",
  "yaml",
  "zod",
];

interface Lock {
  version: string;
  specifiers: Record<string, string>;
  npm: Record<string, { dependencies?: string[]; optionalDependencies?: string[] }>;
  workspace?: unknown;
  [other: string]: unknown;
}

/** The package name of a lock key or specifier tail such as `@scope/name@1.2.3_peer@4`. */
function nameOf(key: string): string {
  const at = key.indexOf("@", 1);
  return at < 0 ? key : key.slice(0, at);
}

/** deno.lock cut down to the packages reachable from the runtime imports. */
export function runtimeLock(full: Lock, imports: Record<string, string>): Lock {
  const specifiers: Record<string, string> = {};
  for (const name of RUNTIME_IMPORTS) {
    const specifier = imports[name];
    if (!specifier || !(specifier in full.specifiers)) {
      throw new Error(`${name} (${specifier}) is not in deno.lock: run the tests once to lock it`);
    }
    specifiers[specifier] = full.specifiers[specifier];
  }
  const keysByName = new Map<string, string[]>();
  for (const key of Object.keys(full.npm)) {
    keysByName.set(nameOf(key), [...keysByName.get(nameOf(key)) ?? [], key]);
  }
  /** A dependency names its package alone when the lock has one version of it. */
  const resolve = (dependency: string): string => {
    if (dependency in full.npm) return dependency;
    const candidates = dependency.includes("@", 1)
      ? Object.keys(full.npm).filter((key) => key.startsWith(`${dependency}_`))
      : keysByName.get(dependency) ?? [];
    if (candidates.length !== 1) {
      throw new Error(`cannot tell which locked package "${dependency}" means: ${candidates}`);
    }
    return candidates[0];
  };
  const keep = new Set<string>();
  const todo = Object.entries(specifiers).map(([specifier, version]) =>
    `${nameOf(specifier.slice("npm:".length))}@${version}`
  );
  while (todo.length > 0) {
    const key = todo.pop()!;
    if (keep.has(key)) continue;
    keep.add(key);
    const entry = full.npm[key];
    for (const dependency of [...entry.dependencies ?? [], ...entry.optionalDependencies ?? []]) {
      todo.push(resolve(dependency));
    }
  }
  const npm = Object.fromEntries([...keep].sort().map((key) => [key, full.npm[key]]));
  // The workspace section lists the config's imports as deno.lock does, or Deno would call the
  // lock out of date.
  return { version: full.version, specifiers, npm, workspace: full.workspace };
}

export function runtimeLockText(root: string): string {
  const full = JSON.parse(Deno.readTextFileSync(`${root}deno.lock`));
  const config = JSON.parse(Deno.readTextFileSync(`${root}deno.json`));
  return JSON.stringify(runtimeLock(full, config.imports), null, 2) + "\n";
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url).pathname;
  Deno.writeTextFileSync(`${root}deno.runtime.lock`, runtimeLockText(root));
  console.log("wrote deno.runtime.lock");
}
