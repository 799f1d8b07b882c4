import assert from "node:assert/strict";
import { userId } from "../../core/ids.ts";
import type { Principal } from "../../core/principal.ts";
import { ListenLedger, REVOKED_LISTEN } from "./stateless_listens.ts";

const alice = (grantId?: string): Principal => ({ id: userId("alice"), grantId });

Deno.test("ListenLedger.untilRevoked() ends a listen when its grant is revoked, and no other grant's", () => {
  const ledger = new ListenLedger();
  const ended: string[] = [];
  ledger.untilRevoked(alice("g1"), (reason) => ended.push(`one: ${reason}`));
  ledger.untilRevoked(alice("g2"), () => ended.push("two"));
  assert.equal(ledger.endGrants(["g1"]), 1);
  assert.deepEqual(ended, [`one: ${REVOKED_LISTEN}`]);
  assert.equal(ledger.endGrants(["g1"]), 0, "ended once");
});

Deno.test("ListenLedger.untilRevoked() ends at once a listen whose grant was revoked before it registered", () => {
  // The link under a listen may take seconds to open; its grant may be revoked meanwhile.
  const ledger = new ListenLedger((grant) => grant === "gone");
  const ended: string[] = [];
  ledger.untilRevoked(alice("gone"), (reason) => ended.push(reason));
  assert.deepEqual(ended, [REVOKED_LISTEN]);
});

Deno.test("ListenLedger.untilRevoked() forgets a listen that ended by itself, and ignores callers without a grant", () => {
  const ledger = new ListenLedger();
  let ended = 0;
  const forget = ledger.untilRevoked(alice("g1"), () => ended++);
  ledger.untilRevoked(alice(), () => ended++);
  forget();
  assert.equal(ledger.endGrants(["g1"]), 0);
  assert.equal(ended, 0);
});

Deno.test("ListenLedger.watch() counts a person's URIs up to the limit and gives them back with unwatch()", () => {
  const ledger = new ListenLedger();
  assert.equal(ledger.watch(alice(), 4, 6), undefined);
  assert.equal(ledger.watch(alice(), 3, 6), 4, "refused: 4 watched already");
  assert.equal(ledger.watch(alice(), 2, 6), undefined);
  assert.equal(ledger.watch({ id: userId("bob") }, 6, 6), undefined, "per person");
  ledger.unwatch(alice(), 4);
  assert.equal(ledger.watch(alice(), 4, 6), undefined);
  assert.equal(ledger.watch(alice(), 1, 6), 6);
});
