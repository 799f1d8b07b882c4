/**
 * The documentation quotes what Gatehouse really prints: every message docs/troubleshooting.md
 * explains (in bold code) is found in the source, piece by piece around the "…" that stand for
 * the varying parts; and every relative link in docs/ and the README points at a file that
 * exists.
 */
import assert from "node:assert/strict";

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
