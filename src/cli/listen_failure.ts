/**
 * What `serve` logs when a listener cannot start: the address, the setting that gave it
 * (`listen` or `metrics.listen`) and what to do, so that "address in use" leads to the file.
 */

/** The log message and fields for a listener at `at`, from `setting`, that failed with `error`. */
export function cannotListen(
  setting: string,
  at: { hostname: string; port: number },
  error: unknown,
): readonly [string, Record<string, unknown>] {
  const address = `${at.hostname}:${at.port}`;
  if (error instanceof Deno.errors.AddrInUse) {
    const flag = setting === "listen" ? " (or start with --port N)" : "";
    return [`cannot listen: ${address} (${setting}) is already in use`, {
      error,
      hint: `stop what listens there, or change ${setting} in the configuration${flag}`,
    }];
  }
  return [`cannot listen on ${address} (${setting})`, {
    error,
    hint: `${setting} must be an address of this machine; ports below 1024 need privileges`,
  }];
}
