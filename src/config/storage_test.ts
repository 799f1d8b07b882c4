import assert from "node:assert/strict";
import { parseConfigText } from "./load.ts";

const SERVERS = `servers:
  a: { transport: stdio, command: x, public: true }
`;
const PG = "storage: postgres://gh:pw@db.internal/gh?sslmode=verify-full\n";

Deno.test("parseConfigText() warns that PostgreSQL storage without a secret would keep the generated master secret in the database in clear", () => {
  const warned = parseConfigText(PG + SERVERS, () => undefined).warnings
    .filter((w) => w.path.join(".") === "secret");
  assert.equal(warned.length, 1);
  assert.match(warned[0].message, /kept in the database in clear/);
  const withSecret = parseConfigText(
    PG + "secret: 0123456789abcdef0123456789abcdef0123456789\n" + SERVERS,
    () => undefined,
  );
  assert.deepEqual(withSecret.warnings.filter((w) => w.path.join(".") === "secret"), []);
  const kv = parseConfigText(SERVERS, () => undefined);
  assert.deepEqual(kv.warnings.filter((w) => w.path.join(".") === "secret"), []);
});

Deno.test("parseConfigText() refuses query parameters of a PostgreSQL URL that would override the gateway's own settings", () => {
  const SECRET = "secret: 0123456789abcdef0123456789abcdef0123456789\n";
  for (const query of ["statement_timeout=0", "options=-c%20statement_timeout%3D0", "max=500"]) {
    const parsed = () =>
      parseConfigText(
        `storage: postgres://gh:pw@db.internal/gh?sslmode=verify-full&${query}\n${SECRET}${SERVERS}`,
        () => undefined,
      );
    assert.throws(parsed, /query parameters Gatehouse does not take/, query);
    assert.throws(parsed, (e: Error) => !e.message.includes("pw@"), "the password is not shown");
  }
  const fine = parseConfigText(
    `storage: postgres://gh:pw@db1,db2/gh?sslmode=verify-full&target_session_attrs=read-write&application_name=gatehouse\n${SECRET}${SERVERS}`,
    () => undefined,
  );
  assert.equal(fine.storage.startsWith("postgres://"), true);
});
