import assert from "node:assert/strict";
import type { UserId } from "./ids.ts";
import { type Principal, statesTheSame } from "./principal.ts";

const alice: Principal = {
  id: "oidc:alice" as UserId,
  email: "alice@example.com",
  groups: ["editors"],
  allGroups: ["editors", "staff", "R&D, Paris"],
  clientId: "client-a",
};

Deno.test("statesTheSame: the groups in another order state the same; a group lost, or another email, does not", () => {
  assert.ok(statesTheSame(alice, { ...alice, allGroups: ["R&D, Paris", "editors", "staff"] }));
  assert.ok(statesTheSame(alice, { ...alice, clientId: "client-b", grantId: "g2" }));
  assert.ok(!statesTheSame(alice, { ...alice, allGroups: ["staff", "R&D, Paris"] }));
  assert.ok(!statesTheSame(alice, { ...alice, groups: [] }));
  assert.ok(!statesTheSame(alice, { ...alice, email: "alice.smith@example.com" }));
  // A name holding a comma or newline is not two names.
  assert.ok(
    !statesTheSame(
      { ...alice, allGroups: ["a\nb"] },
      { ...alice, allGroups: ["a", "b"] },
    ),
  );
});
