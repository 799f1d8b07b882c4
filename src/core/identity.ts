/** A person as the company identity provider described them at login. */
export interface Identity {
  /** The provider's stable subject, prefixed with the provider kind ("github:1234"). */
  subject: string;
  email?: string;
  /** False when the provider says the address is unverified; undefined when it does not say. */
  emailVerified?: boolean;
  name?: string;
  /** GitHub: the organisations the person belongs to (lower-case logins). */
  orgs?: string[];
  /**
   * Groups for access rules: the `groupsClaim` of oidc and azure; GitHub organisations as
   * `org` and teams as `org/team-slug`.
   */
  groups?: string[];
  /** GitHub: every verified address, for domain and address rules. */
  verifiedEmails?: string[];
  /**
   * Epoch ms when the provider last stated `groups` and `orgs` (the sign-in, or a later read
   * when tokens were issued: credentials/idp_identity.ts). Unknown for identities kept before.
   */
  describedAt?: number;
}
