/**
 * `AbortSignal.timeout` on the injected clock: a call to another server (an identity provider,
 * a service's OAuth server, a metadata document) gives up when the gateway's time says so, and
 * the timer is stopped as soon as the call is over instead of lingering until it would fire.
 */
import type { Clock } from "./clock.ts";

/**
 * Runs `work` with a signal that aborts `ms` from now on `clock`, with a "TimeoutError"
 * `DOMException` as `AbortSignal.timeout` does. Like that one, the timer never keeps the
 * process alive.
 */
export async function withTimeout<T>(
  clock: Clock,
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = clock.setTimeout(
    () =>
      controller.abort(
        new DOMException("The operation was aborted due to timeout", "TimeoutError"),
      ),
    ms,
    { unref: true },
  );
  try {
    return await work(controller.signal);
  } finally {
    timer.clear();
  }
}
