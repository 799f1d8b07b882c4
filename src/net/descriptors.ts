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
 * The redirect listener (`tls.redirectHttp`) answers 308s and ACME's HTTP-01 checks, one small
 * answer each: a few connections serve that, and its idle ones make room at the cap like the
 * main port's. Fixed, so that idle connections to it cannot spend the main port's descriptors.
 */
export const REDIRECT_MAX_CONNECTIONS = 64;

/**
 * The cap when none is configured: what the open-file limit leaves after the reserve and the
 * connections another listener of the process may hold (`otherConnections`), so that clients
 * alone cannot run the process out of descriptors.
 */
export function defaultMaxConnections(
  openFileLimit: number | undefined,
  otherConnections = 0,
): number {
  if (!openFileLimit) return 1_000;
  const spare = openFileLimit - RESERVED_DESCRIPTORS -
    otherConnections * DESCRIPTORS_PER_CONNECTION;
  const fits = Math.floor(spare / DESCRIPTORS_PER_CONNECTION);
  return Math.max(16, Math.min(MAX_DEFAULT_CONNECTIONS, fits));
}

/** The connection caps of the process's listeners, out of one descriptor budget. */
export interface ConnectionCaps {
  /** The main port's (`connections.max`, or derived). */
  main: number;
  /** The redirect listener's, when there is one. */
  redirect?: number;
  /** The open-file limit they were derived from, when known. */
  openFiles?: number;
  /** Whether `main` is the configured `connections.max`. */
  configured: boolean;
}

/**
 * `connections.max` (or what the descriptors allow), and the redirect listener's small fixed
 * cap beside it: the main port's derived cap leaves the redirect listener's descriptors aside.
 */
export function connectionCaps(
  configuredMax: number | undefined,
  redirect: boolean,
  openFiles: number | undefined,
): ConnectionCaps {
  const redirectCap = redirect
    ? Math.min(REDIRECT_MAX_CONNECTIONS, configuredMax ?? REDIRECT_MAX_CONNECTIONS)
    : undefined;
  return {
    main: configuredMax ?? defaultMaxConnections(openFiles, redirectCap ?? 0),
    redirect: redirectCap,
    openFiles,
    configured: configuredMax !== undefined,
  };
}

/** The descriptors `caps` may hold at most: three a connection, the reserve aside. */
export function descriptorsNeeded(caps: ConnectionCaps): number {
  return (caps.main + (caps.redirect ?? 0)) * DESCRIPTORS_PER_CONNECTION + RESERVED_DESCRIPTORS;
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
