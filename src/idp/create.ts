/** The identity provider the configuration names. */
import type { IdpConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import { createGithubProvider } from "./github.ts";
import { createOidcProvider } from "./oidc.ts";
import type { IdentityProvider, IdpLog } from "./provider.ts";

export function createIdentityProvider(
  config: IdpConfig,
  clock: Clock,
  log: IdpLog,
): IdentityProvider {
  return config.provider === "github"
    ? createGithubProvider(config, clock, log)
    : createOidcProvider(config, clock, log);
}
