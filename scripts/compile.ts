/**
 * `deno task compile [-- deno compile options, e.g. --target x86_64-unknown-linux-gnu]`: builds
 * dist/gatehouse, one executable with every asset inside, the permissions below baked in, and
 * the commit it was built from (shown by `gatehouse --version`).
 *
 * It runs the Deno that runs it (`Deno.execPath()`), which the task allows by its real path: with
 * Deno installed from npm, `deno` on PATH is a symlink into the package, and `--allow-run=deno`
 * would allow the link, not the program.
 *
 * The build needs Deno's runtime binary for the target, which `deno compile` downloads from
 * dl.deno.land on first use; where that is unreachable, build on a machine where it is.
 */

/**
 * The least Gatehouse needs, and why: net (listen; reach backends, the identity provider and
 * client metadata documents), read (configuration, storage), write (storage), env (`${VAR}`
 * in the configuration), run (stdio backends). Not sys, ffi or hrtime. No prompts: a service
 * has nobody to answer one, so a missing permission fails loudly instead.
 */
export const RUNTIME_PERMISSIONS = [
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run",
  "--no-prompt",
];

const VERSION_FILE = new URL("../src/version.ts", import.meta.url);

/** version.ts with the build's commit in place of "dev". */
export function stampCommit(source: string, commit: string): string {
  if (!/^[0-9a-f]{7,40}(-dirty)?$/.test(commit)) throw new Error(`not a commit: ${commit}`);
  const stamped = source.replace(
    /export const COMMIT = "[^"]*";/,
    `export const COMMIT = "${commit}";`,
  );
  if (stamped === source) throw new Error("src/version.ts has no COMMIT line to stamp");
  return stamped;
}

async function git(...args: string[]): Promise<string> {
  const output = await new Deno.Command("git", { args, stdout: "piped", stderr: "null" }).output();
  if (!output.success) throw new Error(`git ${args.join(" ")} failed`);
  return new TextDecoder().decode(output.stdout).trim();
}

export function compileArgs(extra: string[]): string[] {
  return [
    "compile",
    // Only the gateway's own packages, at deno.lock's versions (scripts/runtime_lock.ts).
    "--lock=deno.runtime.lock",
    "--frozen",
    ...RUNTIME_PERMISSIONS,
    "--unstable-kv",
    // request.signal aborts only when a client goes away, not after every answer (Deno's next
    // default; deno.json says the same for `deno task dev` and the tests).
    "--unstable-no-legacy-abort",
    "--output",
    "dist/gatehouse",
    ...extra,
    "main.ts",
  ];
}

const DIST = new URL("../dist/", import.meta.url);

/** Whether `url` names something that exists. */
function exists(url: URL): boolean {
  try {
    Deno.statSync(url);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

if (import.meta.main) {
  // deno compile makes dist/ before it fetches the runtime; a build that fails must not leave
  // an empty dist/ behind as if something had been built.
  const distBefore = exists(DIST);
  const commit = await git("rev-parse", "--short=12", "HEAD");
  const dirty = (await git("status", "--porcelain", "--untracked-files=no")) !== "";
  const original = await Deno.readTextFile(VERSION_FILE);
  await Deno.writeTextFile(VERSION_FILE, stampCommit(original, dirty ? `${commit}-dirty` : commit));
  try {
    // `deno task compile -- --target …` passes the `--` on; deno compile would take what follows
    // it for the program's arguments.
    const extra = Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args;
    const status = await new Deno.Command(Deno.execPath(), { args: compileArgs(extra) })
      .spawn().status;
    if (!status.success) {
      if (!distBefore && exists(DIST)) await Deno.remove(DIST, { recursive: true });
      console.error(
        "deno compile failed. If it could not download the runtime (dl.deno.land), build on a machine that can reach it; see README.",
      );
    }
    Deno.exitCode = status.code;
  } finally {
    await Deno.writeTextFile(VERSION_FILE, original);
  }
}
