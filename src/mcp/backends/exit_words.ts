/**
 * How the end of a backend process is said to the client whose session it ends: the same words
 * for a session's own process and a shared one (share: person or all), in both revisions.
 */

/** Where an exit's reason points to the log: `before answering initialize` goes before it. */
export const LOG_POINTER = "; its last stderr output is in the gateway's log";

/**
 * `reason` (why a backend ended) as the failure of the session's `initialize`: said alike for a
 * process of one session and one shared (share: person or all), with the pointer to the log last.
 */
export function failedBeforeInitialize(reason: string): string {
  const at = reason.indexOf(LOG_POINTER);
  const [why, pointer] = at < 0 ? [reason, ""] : [reason.slice(0, at), reason.slice(at)];
  return `${why} before answering initialize${pointer}`;
}
