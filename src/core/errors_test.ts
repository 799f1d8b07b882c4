import assert from "node:assert/strict";
import { GatehouseError, hasErrorCode } from "./errors.ts";

class StoreFull extends GatehouseError<"store_full"> {
  constructor() {
    super("store_full", "the store is full; delete old records");
  }
}

Deno.test("GatehouseError carries its code and message and is named after its class", () => {
  const error = new StoreFull();
  assert.equal(error.code, "store_full");
  assert.equal(error.message, "the store is full; delete old records");
  assert.equal(error.name, "StoreFull");
  assert.ok(error instanceof Error);
  assert.match(String(error), /^StoreFull: the store is full/);
});

Deno.test("GatehouseError keeps the cause it was given", () => {
  const cause = new Error("disk");
  assert.equal(new GatehouseError("io", "could not write", { cause }).cause, cause);
});

Deno.test("hasErrorCode() tells the gateway's errors by code and refuses anything else", () => {
  assert.equal(hasErrorCode(new StoreFull(), "store_full"), true);
  assert.equal(hasErrorCode(new StoreFull(), "other"), false);
  assert.equal(
    hasErrorCode(Object.assign(new Error("x"), { code: "store_full" }), "store_full"),
    false,
  );
  assert.equal(hasErrorCode("store_full", "store_full"), false);
});
