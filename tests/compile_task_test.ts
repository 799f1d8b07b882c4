/**
 * `deno task compile` as a user runs it, in a copy of the project: with Deno installed the way
 * the README says (`npm install -g deno`, so `deno` on PATH is a symlink into the npm package),
 * the task may run the Deno that runs it, and a build that fails leaves no empty `dist/`.
 *
 * The build is made to fail at once, without the network, by pointing `DENORT_BIN` (the runtime
 * `deno compile` embeds) at nothing: the failure then comes from `deno compile` itself, after
 * it has made the output folder, which is where a real download failure happens too.
 */
import assert from "node:assert/strict";
import { within } from "./fixtures/waits.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** The project's files the compile task reads, in a fresh git repository of their own. */
async function projectCopy(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-compile-" });
  const copy = new Deno.Command("cp", {
    args: ["-r", "deno.json", "deno.lock", "deno.runtime.lock", "main.ts", "src", "scripts", dir],
    cwd: ROOT,
  });
  assert.ok((await copy.output()).success, "copying the project");
  for (
    const args of [
      ["init", "-q"],
      ["add", "."],
      ["-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-qm", "copy"],
    ]
  ) {
    const git = await new Deno.Command("git", { args, cwd: dir, stdout: "null" }).output();
    assert.ok(git.success, `git ${args.join(" ")}: ${new TextDecoder().decode(git.stderr)}`);
  }
  return dir;
}

Deno.test("deno task compile runs the Deno behind a symlinked deno, and a failed build leaves no dist/", async () => {
  const dir = await projectCopy();
  try {
    // `deno` on PATH as npm installs it: a symlink to the real program elsewhere.
    await Deno.mkdir(`${dir}/bin`);
    await Deno.symlink(Deno.execPath(), `${dir}/bin/deno`);
    const versionBefore = await Deno.readTextFile(`${dir}/src/version.ts`);
    const output = await within(
      "deno task compile to fail",
      new Deno.Command(`${dir}/bin/deno`, {
        // Options after `--` reach deno compile (deno task passes the `--` on too).
        args: ["task", "compile", "--", "--no-check"],
        cwd: dir,
        env: {
          PATH: `${dir}/bin:${Deno.env.get("PATH")}`,
          DENORT_BIN: `${dir}/no-such-denort`,
          NO_COLOR: "1",
        },
        stdout: "piped",
        stderr: "piped",
      }).output(),
      120_000,
    );
    const stderr = new TextDecoder().decode(output.stderr);
    assert.ok(!output.success, "the build cannot succeed without a runtime to embed");
    assert.doesNotMatch(stderr, /NotCapable|Requires run access/, stderr);
    // deno compile itself ran, and failed for the reason given to it.
    assert.match(stderr, /Could not find denort/, stderr);
    assert.match(stderr, /deno compile failed/);
    await assert.rejects(Deno.stat(`${dir}/dist`), Deno.errors.NotFound, "dist/ was left behind");
    assert.equal(await Deno.readTextFile(`${dir}/src/version.ts`), versionBefore);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
