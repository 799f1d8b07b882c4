import assert from "node:assert/strict";
import { nextPage } from "./github_api.ts";

const API = "https://api.github.com";

Deno.test('nextPage() follows rel="next" of GitHub\'s Link header', () => {
  const link = `<${API}/user/teams?per_page=100&page=2>; rel="next", ` +
    `<${API}/user/teams?per_page=100&page=5>; rel="last"`;
  assert.equal(nextPage(link, API), `${API}/user/teams?per_page=100&page=2`);
  assert.equal(nextPage(`<${API}/user/teams?page=1>; rel="prev"`, API), undefined);
  assert.equal(nextPage(null, API), undefined);
});

Deno.test("nextPage() never leaves the API root, so the person's token stays with GitHub", () => {
  assert.equal(nextPage('<https://evil.example/user/teams?page=2>; rel="next"', API), undefined);
  const ghes = "https://ghe.example.com/api/v3";
  assert.equal(
    nextPage('<https://ghe.example.com/login/x?page=2>; rel="next"', ghes),
    undefined,
  );
  assert.equal(
    nextPage('<https://ghe.example.com/api/v3/user/teams?page=2>; rel="next"', ghes),
    "https://ghe.example.com/api/v3/user/teams?page=2",
  );
});
