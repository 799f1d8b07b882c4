import type { UserId } from "./ids.ts";

/** Who is calling: a person, or a bearer token standing for one. */
export interface Principal {
  id: UserId;
  email?: string;
  /** The OAuth client the person's access token was issued to. */
  clientId?: string;
  /** Groups as the identity provider named them at sign-in, or a service token's `groups`. */
  groups?: readonly string[];
  /** The grant (token family) the access token belongs to, for revocation. */
  grantId?: string;
}
