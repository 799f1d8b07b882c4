/**
 * A GET on a URL someone else chose (a client ID metadata document): https only, public
 * addresses only unless the host is allow-listed, no redirects, a short timeout and a size cap.
 * Residual risk, stated plainly: the name is resolved once for the check and again by fetch,
 * so a DNS answer that changes in between (rebinding) is not caught here.
 */
import type { Clock } from "../core/clock.ts";
import { readAllCapped } from "../core/streams.ts";
import { withTimeout } from "../core/timeout_signal.ts";
import { isIpLiteral, isPublicAddress } from "./addresses.ts";

export interface GuardedFetchOptions {
  allowPrivateHosts: string[];
  timeoutMs: number;
  maxBytes: number;
}

/** Without cache headers a document is reused for this long. */
const DEFAULT_MAX_AGE_SECONDS = 300;

async function resolveAll(hostname: string): Promise<string[]> {
  const lookups = await Promise.allSettled([
    Deno.resolveDns(hostname, "A"),
    Deno.resolveDns(hostname, "AAAA"),
  ]);
  return lookups.flatMap((result) => result.status === "fulfilled" ? result.value : []);
}

async function checkDestination(url: URL, allowPrivateHosts: string[]): Promise<void> {
  const host = url.hostname.toLowerCase();
  if (allowPrivateHosts.includes(host)) return;
  const addresses = isIpLiteral(host) ? [host] : await resolveAll(host);
  if (addresses.length === 0) throw new Error(`${host} does not resolve`);
  const blocked = addresses.find((address) => !isPublicAddress(address));
  if (blocked) {
    throw new Error(
      `${host} resolves to the non-public address ${blocked}; allow-list the host to permit it`,
    );
  }
}

function maxAge(cacheControl: string | null): number {
  if (!cacheControl) return DEFAULT_MAX_AGE_SECONDS;
  if (/(^|,)\s*(no-store|no-cache|private)\b/i.test(cacheControl)) return 0;
  const match = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl);
  return match ? Number(match[1]) : DEFAULT_MAX_AGE_SECONDS;
}

export async function guardedFetchJson(
  text: string,
  options: GuardedFetchOptions,
  clock: Clock,
): Promise<{ body: unknown; maxAgeSeconds: number }> {
  const url = new URL(text);
  if (url.protocol !== "https:") throw new Error("only https URLs are fetched");
  await checkDestination(url, options.allowPrivateHosts);
  // The time limit covers the answer's body too, as a slow sender can hold that open.
  const { bytes, cacheControl } = await withTimeout(clock, options.timeoutMs, async (signal) => {
    const response = await fetch(url, {
      redirect: "manual",
      headers: { accept: "application/json", "user-agent": "gatehouse" },
      signal,
    });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      throw new Error(`it answered with a redirect (${response.status}), which is not followed`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`it answered ${response.status}`);
    }
    const bytes = await readAllCapped(response.body, options.maxBytes);
    return { bytes, cacheControl: response.headers.get("cache-control") };
  });
  if (!bytes) throw new Error(`the document is larger than ${options.maxBytes} bytes`);
  const body = new TextDecoder().decode(bytes);
  try {
    return { body: JSON.parse(body), maxAgeSeconds: maxAge(cacheControl) };
  } catch {
    throw new Error("it is not JSON");
  }
}

/**
 * A POST of `body` as JSON to a URL the configuration names (an approval's `notify:` webhook),
 * under the same rules as the GET above: https, public addresses unless allow-listed, no
 * redirects, a time limit; the answer is read no further than its status.
 */
export async function guardedPostJson(
  text: string,
  body: unknown,
  options: GuardedFetchOptions,
  clock: Clock,
): Promise<void> {
  const url = new URL(text);
  if (url.protocol !== "https:") throw new Error("only https URLs are fetched");
  await checkDestination(url, options.allowPrivateHosts);
  await withTimeout(clock, options.timeoutMs, async (signal) => {
    const response = await fetch(url, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/json", "user-agent": "gatehouse" },
      body: JSON.stringify(body),
      signal,
    });
    await response.body?.cancel();
    if (response.status < 200 || response.status >= 300) {
      throw new Error(`it answered ${response.status}`);
    }
  });
}
