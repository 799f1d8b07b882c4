import type { UserId } from "./ids.ts";

/** Who is calling: a person, or a bearer token standing for one. */
export interface Principal {
  id: UserId;
  email?: string;
  /** The OAuth client the person's access token was issued to. */
  clientId?: string;
}
