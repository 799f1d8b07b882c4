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

/**
 * What a principal states of the person besides who they are: their email and groups (those
 * rules name and all), as one text. The groups' order is not part of it: a provider may list
 * them in another order at each refresh, and nothing changed for the person.
 */
export function statedOf(principal: Principal): string {
  const sorted = (names: readonly string[] | undefined) => names && [...names].sort();
  return JSON.stringify([
    principal.email,
    sorted(principal.groups),
    sorted(principal.allGroups),
  ]);
}

/**
 * Whether two principals of one person state the same of them. A session opened with one is
 * judged by its groups and tells its backend who calls (identity headers, the assertion,
 * `{{user.*}}`): it is not continued with the other.
 */
export function statesTheSame(a: Principal, b: Principal): boolean {
  return statedOf(a) === statedOf(b);
}
