import assert from "node:assert/strict";
import type { AccessPolicy } from "../config/types.ts";
import { checkAccess } from "./policy.ts";

const POLICY: AccessPolicy = {
  domains: [],
  emails: [],
  orgs: [],
  groups: ["Editors", "acme/platform"],
  anyone: false,
};

Deno.test("checkAccess() admits a person in any one of allow.groups", () => {
  assert.equal(
    checkAccess({ subject: "oidc:a", email: "a@else.example", groups: ["x", "Editors"] }, POLICY),
    undefined,
  );
  assert.equal(
    checkAccess({ subject: "github:1", groups: ["acme", "acme/platform"] }, POLICY),
    undefined,
  );
});

Deno.test("checkAccess() compares groups exactly and refuses a person in none of them", () => {
  for (const groups of [[], ["editors"], ["acme"], undefined]) {
    assert.equal(
      checkAccess({ subject: "oidc:b", email: "b@else.example", groups }, POLICY),
      "b@else.example is not permitted by this gateway's access policy; ask its administrators for access",
      JSON.stringify(groups),
    );
  }
});
