import assert from "node:assert/strict";
import { namedGroups } from "./named_groups.ts";

Deno.test("namedGroups() collects the groups of servers' access, their tool rules and oauth.allow", () => {
  const names = namedGroups(
    [
      { access: { groups: ["editors", "ops"] } },
      {
        tools: {
          rules: [
            { access: { groups: ["Writers"] } },
            { access: { groups: ["editors"] } },
          ],
        },
      },
      {},
    ],
    { groups: ["staff"] },
  );
  assert.deepEqual([...names].sort(), ["Writers", "editors", "ops", "staff"]);
});

Deno.test("namedGroups() is empty when nothing names a group", () => {
  assert.equal(namedGroups([{}, { access: { groups: [] } }]).size, 0);
});
