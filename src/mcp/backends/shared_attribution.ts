/**
 * Whose call a shared process's question or notice is about when the message itself does not
 * say (a progress notice says, by its token; an answer, by its id). Over stdio nothing on the
 * wire ties a server's `elicitation/create` or log line to the call it came from, so the only
 * witness is which calls were in flight:
 *
 * - on a person's process every session is that person's: the one session with calls in
 *   flight hears it, or, with several, all of them (a log) or none (a question);
 * - on everyone's process (`share: all`) a message goes to a session only when that session's
 *   calls are the only ones in flight and none of them ever shared the process with another
 *   session's call: a process still working on bob's call after bob's answer went out would
 *   otherwise ask alice, whose call happens to be waiting. Anything else is refused (a question)
 *   or dropped and counted (a notice), never relayed to another person.
 */
import type { ProcessPort } from "./process_port.ts";

/** A call in flight on the process, as attribution sees it. */
export interface CallInFlight {
  port: ProcessPort;
  method: string;
  /** Another session's call was in flight at some moment of this one's life. */
  overlapped?: boolean;
}

/** `call` begins: it and every call of another session in flight now have overlapped. */
export function beginCall(call: CallInFlight, inFlight: Iterable<CallInFlight>): void {
  for (const other of inFlight) {
    if (other.port === call.port) continue;
    other.overlapped = true;
    call.overlapped = true;
  }
}

/**
 * Why a question of the process cannot go to the session of `takers` (the calls in flight that
 * may take input), or undefined when the one taker's session may be asked.
 */
export function whyNotAttributed(
  takers: readonly CallInFlight[],
  everyone: boolean,
): string | undefined {
  if (takers.length === 0) {
    return "no request of a client is waiting for input on this shared process";
  }
  if (takers.length > 1) {
    return "several clients' requests are waiting on this shared process, and the gateway cannot tell which one asks";
  }
  if (everyone && takers[0].overlapped) {
    return "another person's request ran on this process shared by everyone while the waiting one did, and the gateway cannot tell whose question this is";
  }
  return undefined;
}

/** The sessions a notice that names no call goes to (none: it is dropped). */
export function noticeTo(
  method: string,
  calls: readonly CallInFlight[],
  ports: ReadonlySet<ProcessPort>,
  everyone: boolean,
): Iterable<ProcessPort> {
  const busy = new Set(calls.map((call) => call.port));
  if (everyone) {
    const attributed = method === "notifications/message" && busy.size === 1 &&
      !calls.some((call) => call.overlapped);
    return attributed ? busy : [];
  }
  // A person's process: every session on it is theirs.
  return method === "notifications/message" && busy.size === 1 ? busy : ports;
}
