import assert from "node:assert/strict";
import { showStorage, storageSummary } from "./storage_url.ts";

Deno.test("showStorage() and storageSummary() never show a PostgreSQL password, whatever the scheme's case", () => {
  for (const url of ["postgres://gh:s3cret@db/gh", "PostgreSQL://gh:s3cret@db/gh"]) {
    assert.ok(!showStorage(url).includes("s3cret"), showStorage(url));
    assert.equal(storageSummary(url), "PostgreSQL");
  }
  assert.ok(!showStorage("postgres://gh:s3cret@db1:5432,db2:5432/gh").includes("s3cret"));
  assert.equal(storageSummary("./data/gatehouse.kv"), "./data/gatehouse.kv");
});
