import assert from "node:assert/strict";
import { describeSchemaDump } from "./schema_dump.ts";

/** What an SDK server answered for `resources/read` without a uri (its ZodError's message). */
const DUMP = JSON.stringify(
  [{
    expected: "string",
    code: "invalid_type",
    path: ["params", "uri"],
    message: "Invalid input: expected string, received undefined",
  }],
  null,
  2,
);

Deno.test("describeSchemaDump() names the first problem's place and words in one sentence", () => {
  assert.equal(
    describeSchemaDump(DUMP),
    "the backend found the request invalid at params.uri: " +
      "Invalid input: expected string, received undefined",
  );
});

Deno.test("describeSchemaDump() counts the further problems and formats array indices", () => {
  const issues = [
    { code: "invalid_type", path: ["params", "items", 0, "uri"], message: "Required" },
    { code: "invalid_type", path: ["params", "name"], message: "Required" },
    { code: "unrecognized_keys", path: [], message: 'Unrecognized key: "x"' },
  ];
  assert.equal(
    describeSchemaDump(JSON.stringify(issues)),
    "the backend found the request invalid at params.items[0].uri: Required (and 2 more problems)",
  );
  assert.equal(
    describeSchemaDump(JSON.stringify([issues[2]])),
    'the backend found the request invalid: Unrecognized key: "x"',
  );
});

Deno.test("describeSchemaDump() leaves every other message alone", () => {
  for (
    const message of [
      "Tool nope not found",
      "[not json",
      "[]",
      '["a", "b"]',
      '[{"code": "x", "message": "no path"}]',
      '[{"code": 1, "path": [], "message": "numeric code"}]',
    ]
  ) assert.equal(describeSchemaDump(message), undefined, message);
});
