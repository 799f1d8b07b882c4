import assert from "node:assert/strict";
import { compileGlobs } from "./glob.ts";

Deno.test("compileGlobs() matches whole names with * and ?, everything else literally", () => {
  const rows: { patterns: string[]; name: string; matches: boolean }[] = [
    { patterns: ["get_*"], name: "get_issue", matches: true },
    { patterns: ["get_*"], name: "get_", matches: true },
    { patterns: ["get_*"], name: "forget_it", matches: false },
    { patterns: ["get_*"], name: "Get_issue", matches: false },
    { patterns: ["echo"], name: "echo", matches: true },
    { patterns: ["echo"], name: "echo2", matches: false },
    { patterns: ["echo"], name: "an echo", matches: false },
    { patterns: ["v?"], name: "v1", matches: true },
    { patterns: ["v?"], name: "v", matches: false },
    { patterns: ["v?"], name: "v12", matches: false },
    { patterns: ["v?"], name: "v😀", matches: true },
    { patterns: ["*"], name: "", matches: true },
    { patterns: ["*"], name: "github.create_issue", matches: true },
    { patterns: ["github.*"], name: "github.create_issue", matches: true },
    { patterns: ["github.*"], name: "githubXcreate_issue", matches: false },
    { patterns: ["a.b"], name: "aXb", matches: false },
    { patterns: ["a-b/c"], name: "a-b/c", matches: true },
    { patterns: ["*_admin", "write_*"], name: "write_file", matches: true },
    { patterns: ["*_admin", "write_*"], name: "user_admin", matches: true },
    { patterns: ["*_admin", "write_*"], name: "read_file", matches: false },
    { patterns: ["a*b*c"], name: "a\nb\nc", matches: true },
  ];
  for (const { patterns, name, matches } of rows) {
    assert.equal(compileGlobs(patterns)!.test(name), matches, `${patterns} against "${name}"`);
  }
});

Deno.test("compileGlobs() gives nothing for no patterns", () => {
  assert.equal(compileGlobs([]), undefined);
});
