import assert from "node:assert/strict";
import { answerInstead } from "./unreadable_lines.ts";

Deno.test("answerInstead() places a skipped answer by the id at its start or its end", () => {
  assert.deepEqual(answerInstead('{"jsonrpc":"2.0","id":"gh-share-3","result":{"a":[', "", "why"), {
    jsonrpc: "2.0",
    id: "gh-share-3",
    error: { code: -32000, message: "why" },
  });
  const atEnd = answerInstead('{"result":{"content":[{"text":"xxxx', 'xxx"}]},"id":5}', "why");
  assert.equal((atEnd as { id: unknown }).id, 5);
});

Deno.test("answerInstead() names no call for a request of the process's or a stray line", () => {
  assert.equal(
    answerInstead('{"jsonrpc":"2.0","id":"q1","method":"elicitation/create"', "", "w"),
    undefined,
  );
  assert.equal(answerInstead("this is not json", "this is not json", "w"), undefined);
});
