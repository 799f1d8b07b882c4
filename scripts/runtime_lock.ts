/**
 * `deno task lock`: writes deno.runtime.lock, the part of deno.lock the gateway itself needs.
 *
 * Two configurations: deno.json is the gateway's (its imports are what main.ts imports, its lock
 * is deno.runtime.lock, frozen), deno.test.json the tests' and bench's (every import, locked in
 * deno.lock: a browser driver, an identity provider, the stdio peers, the conformance suite).
 * `deno task` installs every package of the root configuration's lockfile and imports before it
 * runs any task, so with everything in deno.json a user's first `deno task dev` fetched all of
 * it (216 packages) and warned about build scripts it ignored. deno.runtime.lock is cut from
 * deno.lock, never resolved anew: the same versions, only the gateway's packages.
 * tests/runtime_lock_test.ts keeps it in step with deno.lock, the two configurations in step
 * with each other, and holds the start command to it on an empty cache.
 */

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

/** deno.lock cut down to the packages reachable from the gateway's imports (deno.json's). */
export function runtimeLock(full: Lock, imports: Record<string, string>): Lock {
  const specifiers: Record<string, string> = {};
  for (const [name, specifier] of Object.entries(imports)) {
    if (!(specifier in full.specifiers)) {
      throw new Error(
        `${name} (${specifier}) is not in deno.lock: add it to deno.test.json's imports too and run the tests once to lock it`,
      );
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
  // Deno names a dependency by its package alone when the lock holds one version of it, so a
  // reference deno.lock had to spell out (express@5.3.0 beside express@4) may be bare here.
  const keptVersions = new Map<string, number>();
  for (const key of keep) keptVersions.set(nameOf(key), (keptVersions.get(nameOf(key)) ?? 0) + 1);
  const spell = (dependency: string): string => {
    const key = resolve(dependency);
    const name = nameOf(key);
    return keptVersions.get(name) === 1
      ? name
      : `${name}@${key.slice(name.length + 1).split("_")[0]}`;
  };
  const npm = Object.fromEntries(
    [...keep].sort().map((key) => {
      const entry = { ...full.npm[key] };
      if (entry.dependencies) entry.dependencies = entry.dependencies.map(spell);
      if (entry.optionalDependencies) {
        entry.optionalDependencies = entry.optionalDependencies.map(spell);
      }
      return [key, entry];
    }),
  );
  // The workspace section lists deno.json's imports, or Deno would call the lock out of date.
  const workspace = { dependencies: Object.values(imports).sort() };
  return { version: full.version, specifiers: sorted(specifiers), npm, workspace };
}

function sorted(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a < b ? -1 : 1));
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
