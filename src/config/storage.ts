/**
 * `storage:` and `replicaId:`: where the gateway keeps its state, and this replica's name
 * among those sharing it.
 */
import { Checker, describe } from "./checker.ts";

const DEFAULT_STORAGE = "./data/gatehouse.kv";

export function parseStorage(c: Checker, value: unknown): string {
  return value === undefined ? DEFAULT_STORAGE : c.string(value, ["storage"]) ?? DEFAULT_STORAGE;
}

/** Session ids carry it, so it is kept short and URL- and header-safe. */
export function parseReplicaId(c: Checker, value: unknown): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const id = c.string(value, ["replicaId"]);
  if (id !== undefined && !/^[a-z0-9-]{1,32}$/.test(id)) {
    c.fail(
      ["replicaId"],
      `not a replica id: ${describe(id)}`,
      "use up to 32 lower-case letters, digits and '-', e.g. gw-1",
    );
    return undefined;
  }
  return id;
}
