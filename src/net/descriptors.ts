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

/**
 * The soft open-file limit of this process. Deno lets only a process with every permission read
 * /proc/self/limits (the gateway runs with fewer), so a shell the gateway starts reports it
 * instead: a child inherits its parent's limits. Undefined when neither can say.
 */
export function openFileLimit(): number | undefined {
  return limitFromProc() ?? limitFromShell();
}

/** From /proc/self/limits: readable only with every permission. */
export function limitFromProc(): number | undefined {
  try {
    const limits = Deno.readTextFileSync("/proc/self/limits");
    const line = limits.split("\n").find((l) => l.startsWith("Max open files"));
    return parseLimit(line?.split(/\s{2,}/)[1]);
  } catch {
    return undefined;
  }
}

/** From `ulimit` in a shell the gateway starts (needs permission to run /bin/sh). */
export function limitFromShell(): number | undefined {
  try {
    const { success, stdout } = new Deno.Command("/bin/sh", {
      args: ["-c", "ulimit -Sn"],
      clearEnv: true,
      stdin: "null",
      stderr: "null",
    }).outputSync();
    return success ? parseLimit(new TextDecoder().decode(stdout).trim()) : undefined;
  } catch {
    return undefined;
  }
}

/** A limit as /proc and `ulimit` write it; "unlimited" counts as none known. */
export function parseLimit(text: string | undefined): number | undefined {
  return text && /^\d+$/.test(text) ? Number(text) : undefined;
}
