import type { UserId } from "./ids.ts";

/** Who is calling: a person, or a bearer token standing for one. */
export interface Principal {
  id: UserId;
  email?: string;
  /** The OAuth client the person's access token was issued to. */
  clientId?: string;
  /**
   * Groups for rules: those of the person's groups the configuration names (an access token
   * carries no others), or a service token's `groups`.
   */
  groups?: readonly string[];
  /**
   * Every group the identity provider named for the person (their grant keeps them), for what
   * backends are told (identity headers, the assertion, `{{user.groups}}`); `groups` when unknown.
   */
  allGroups?: readonly string[];
  /** The grant (token family) the access token belongs to, for revocation. */
  grantId?: string;
}
