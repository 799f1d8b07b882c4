/** Every Deno KV key prefix the gateway writes, in one place so that none collide. */
export const KEYS = {
  /** The generated master secret, when the config gives none. */
  masterSecret: ["gatehouse", "master-secret"] as const,
} as const;
