/**
 * How many client connections the process's file descriptors allow: the default for
 * `connections.max`, so that clients alone cannot run the gateway out of descriptors.
 */

/** Descriptors kept back for backends, storage and outgoing HTTP, whatever the clients do. */
const RESERVED_DESCRIPTORS = 512;
/** Each client connection costs three: the client's socket and both ends of the unix hop. */
const DESCRIPTORS_PER_CONNECTION = 3;
const MAX_DEFAULT_CONNECTIONS = 10_000;

/**
 * The cap when none is configured: what the open-file limit leaves after the reserve, so that
 * clients alone cannot run the process out of descriptors.
 */
export function defaultMaxConnections(openFileLimit: number | undefined): number {
  if (!openFileLimit) return 1_000;
  const fits = Math.floor((openFileLimit - RESERVED_DESCRIPTORS) / DESCRIPTORS_PER_CONNECTION);
  return Math.max(16, Math.min(MAX_DEFAULT_CONNECTIONS, fits));
}

/** The soft open-file limit of this process, from /proc on Linux; undefined elsewhere. */
export function openFileLimit(): number | undefined {
  try {
    const limits = Deno.readTextFileSync("/proc/self/limits");
    const line = limits.split("\n").find((l) => l.startsWith("Max open files"));
    const soft = line?.split(/\s{2,}/)[1];
    return soft && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}
