/**
 * The documentation quotes what Gatehouse really prints: every message docs/troubleshooting.md
 * explains (in bold code) is found in the source, piece by piece around the "…" that stand for
 * the varying parts; and every relative link in docs/ and the README points at a file that
 * exists.
 */
import assert from "node:assert/strict";
import { parseConfigText } from "../src/config/load.ts";
import { RESTART_ONLY } from "../src/serve.ts";

const ROOT = new URL("../", import.meta.url).pathname;

function sourceTexts(): string[] {
  const texts = [Deno.readTextFileSync(`${ROOT}main.ts`)];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) {
        texts.push(Deno.readTextFileSync(path));
      }
    }
  };
  walk(`${ROOT}src`);
  return texts;
}

Deno.test("docs/troubleshooting.md quotes only messages Gatehouse prints", () => {
  const doc = Deno.readTextFileSync(`${ROOT}docs/troubleshooting.md`);
  const messages = [...doc.matchAll(/\*\*`([^`]+)`\*\*/g)].map((m) => m[1]);
  assert.ok(messages.length >= 30, `only ${messages.length} messages found`);
  const sources = sourceTexts();
  for (const message of messages) {
    const pieces = message.split("…").map((piece) => piece.trim()).filter((p) => p.length >= 4);
    assert.ok(pieces.length > 0, message);
    const found = sources.some((text) => pieces.every((piece) => text.includes(piece)));
    assert.ok(found, `no source file prints "${message}"`);
  }
});

Deno.test("relative links in the README and docs/ point at files that exist", () => {
  const files = [
    "README.md",
    ...[...Deno.readDirSync(`${ROOT}docs`)]
      .filter((e) => e.name.endsWith(".md")).map((e) => `docs/${e.name}`),
  ];
  for (const file of files) {
    const text = Deno.readTextFileSync(`${ROOT}${file}`);
    const dir = file.includes("/") ? file.replace(/[^/]*$/, "") : "";
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target) || target.startsWith("#")) continue;
      const path = `${ROOT}${dir}${target.replace(/#.*$/, "")}`;
      assert.ok(
        (() => {
          try {
            Deno.statSync(path);
            return true;
          } catch {
            return false;
          }
        })(),
        `${file} links to ${target}, which does not exist`,
      );
    }
  }
});

Deno.test("README.md and docs/deploy.md name the settings that take a restart, as serve.ts keeps them", () => {
  // storageOptions is what storagePool, storageTimeout and storageCaFile resolve to.
  const expected = RESTART_ONLY.flatMap((key) =>
    key === "storageOptions" ? ["storagePool", "storageTimeout", "storageCaFile"] : [key]
  ).sort();
  for (const file of ["README.md", "docs/deploy.md"]) {
    const text = Deno.readTextFileSync(`${ROOT}${file}`).replace(/\s+/g, " ");
    const sentence = /((?:`[\w.]+`(?:, | and ))+`[\w.]+`) change only on restart/.exec(text);
    assert.ok(sentence, `${file} does not say what changes only on restart`);
    const named = [...sentence[1].matchAll(/`([\w.]+)`/g)].map((m) => m[1]).sort();
    assert.deepEqual(named, expected, `${file}: ${sentence[0]}`);
  }
});

Deno.test("docs/deploy.md's ACME snippet, its commented keys taken in, is a valid tls.acme", () => {
  const doc = Deno.readTextFileSync(`${ROOT}docs/deploy.md`);
  const block = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1])
    .find((text) => text.includes("acme:"));
  assert.ok(block, "no ACME snippet in docs/deploy.md");
  const uncommented = block.replace(/^(\s*)# (directory|caRoots|renewBefore):/gm, "$1$2:");
  const config = parseConfigText(
    `${uncommented}servers:\n  a: { transport: stdio, command: x, public: true }\n`,
    () => undefined,
    "docs/deploy.md",
  );
  const acme = config.tls?.acme;
  assert.ok(acme, "the snippet configures no tls.acme");
  assert.match(acme.directory, /letsencrypt/);
  assert.equal(acme.caRootsFile, "/etc/gatehouse/company-ca.pem");
  assert.equal(acme.renewBeforeMs, 30 * 24 * 3600_000);
});
