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
