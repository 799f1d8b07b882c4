import type { UserId } from "./ids.ts";

/** Who is calling: a person, or a bearer token standing for one. */
export interface Principal {
  id: UserId;
  email?: string;
}
