/**
 * Whether a TCP connection to a URL's host and port can be opened, within a time limit: for
 * watching an endpoint the gateway does not talk to itself (Deno's OTLP exporter), without
 * sending it anything. A connection that opens is closed at once.
 */
import { type Clock, waitAtMost } from "../core/clock.ts";

/** Undefined when `url`'s host accepted a connection within `timeoutMs`, else why not. */
export async function tcpProbe(
  url: string,
  timeoutMs: number,
  clock: Clock,
): Promise<string | undefined> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return `not a URL: ${url}`;
  }
  const port = Number(target.port || (target.protocol === "https:" ? 443 : 80));
  const hostname = target.hostname.replace(/^\[|\]$/g, "");
  let failure: string | undefined;
  const connecting = Deno.connect({ hostname, port }).catch((error: Error) => {
    failure = `${error.name}: ${error.message}`;
    return undefined;
  });
  const connection = await waitAtMost(clock, timeoutMs, connecting);
  if (connection) {
    connection.close();
    return undefined;
  }
  // Too late: whatever opens after the limit is closed when it does.
  if (!failure) void connecting.then((late) => late?.close());
  return failure ?? `no connection within ${timeoutMs} ms`;
}
