/** The identity provider the configuration names. */
import type { IdpConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import { createGithubProvider } from "./github.ts";
import { createOidcProvider } from "./oidc.ts";
import type { IdentityProvider } from "./provider.ts";

export function createIdentityProvider(config: IdpConfig, clock: Clock): IdentityProvider {
  return config.provider === "github"
    ? createGithubProvider(config, clock)
    : createOidcProvider(config, clock);
}
