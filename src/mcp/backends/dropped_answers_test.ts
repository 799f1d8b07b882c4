import assert from "node:assert/strict";
import { eventData, headFields, tailId } from "./dropped_answers.ts";

Deno.test("headFields() reads the top-level keys and id of a JSON object's first bytes", () => {
  const head = headFields('{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"xx');
  assert.deepEqual([...head.keys], ["jsonrpc", "id", "result"]);
  assert.equal(head.id, 7);
  assert.equal(headFields('{ "id" : "a\\"b", "error": {').id, 'a"b');
  // An id inside the result, or inside a string, is not the message's.
  const nested = headFields('{"result":{"id":3,"note":"\\"id\\":4,"},"x":"{\\"id\\":5');
  assert.deepEqual([...nested.keys], ["result", "x"]);
  assert.equal(nested.id, undefined);
  assert.equal(headFields('["id", 1]').id, undefined);
});

Deno.test("tailId() takes an id only where it closes the message", () => {
  assert.equal(tailId('xx"}]},"jsonrpc":"2.0","id":12}'), 12);
  assert.equal(tailId('"},"id":"s-9" }\n'), "s-9");
  assert.equal(tailId('"id":12}}'), undefined, "an id that closes an inner object");
  assert.equal(tailId('"id":12,"jsonrpc":"2.0"}'), undefined);
});

Deno.test("eventData() keeps an event's data lines, and a first line cut in the middle", () => {
  assert.equal(eventData('event: message\ndata: {"a":\ndata:1}\n\n'), '{"a":\n1}');
  assert.equal(eventData('xx","id":3}\n\n', true), 'xx","id":3}');
  assert.equal(eventData("id: 4\r\ndata: x\r\n"), "x");
});
