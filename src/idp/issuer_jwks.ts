/**
 * The keys of an ID-JAG issuer: its discovery document (OpenID Connect, else RFC 8414) names
 * `jwks_uri`, which is fetched. Both answers are bounded in time and size, redirects are not
 * followed, and plain http is allowed only for an issuer on this machine (tests, development),
 * as for the sign-in provider. `oauth/issuer_keys.ts` decides when to call this.
 */
import type { Clock } from "../core/clock.ts";
import { isLoopbackHttp } from "../core/loopback.ts";
import { withTimeout } from "../core/timeout_signal.ts";

const TIMEOUT_MS = 5_000;
const MAX_BYTES = 256 * 1024;

async function fetchJson(url: URL, clock: Clock, insecure: boolean): Promise<unknown> {
  if (url.protocol !== "https:" && !(insecure && isLoopbackHttp(url))) {
    throw new Error(`${url.href} is not https`);
  }
  return await withTimeout(clock, TIMEOUT_MS, async (signal) => {
    const response = await fetch(url, {
      redirect: "manual",
      signal,
      headers: { accept: "application/json", "user-agent": "gatehouse" },
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`${url.href} answered ${response.status}`);
    }
    const reader = response.body?.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > MAX_BYTES) {
        await reader.cancel();
        throw new Error(`${url.href} answered more than ${MAX_BYTES} bytes`);
      }
      chunks.push(value);
    }
    const bytes = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    try {
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      throw new Error(`${url.href} answered something other than JSON`);
    }
  });
}

/** The issuer's discovery document, OpenID Connect's first, RFC 8414's when that fails. */
export async function discoverIssuer(
  issuer: string,
  clock: Clock,
): Promise<Record<string, unknown>> {
  const base = new URL(issuer);
  const insecure = isLoopbackHttp(base);
  const path = base.pathname.replace(/\/$/, "");
  const places = [
    new URL(`${base.origin}${path}/.well-known/openid-configuration`),
    new URL(`${base.origin}/.well-known/oauth-authorization-server${path}`),
  ];
  let lastError: unknown;
  for (const place of places) {
    try {
      const document = await fetchJson(place, clock, insecure);
      if (!document || typeof document !== "object" || Array.isArray(document)) {
        throw new Error(`${place.href} is not a JSON object`);
      }
      const record = document as Record<string, unknown>;
      if (record.issuer !== issuer) {
        throw new Error(`${place.href} names issuer ${String(record.issuer).slice(0, 200)}`);
      }
      return record;
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/** The issuer's JWKS document, through its discovery's `jwks_uri`. */
export async function fetchIssuerJwks(issuer: string, clock: Clock): Promise<unknown> {
  const discovery = await discoverIssuer(issuer, clock);
  if (typeof discovery.jwks_uri !== "string") {
    throw new Error(`the discovery document of ${issuer} has no jwks_uri`);
  }
  return await fetchJson(new URL(discovery.jwks_uri), clock, isLoopbackHttp(new URL(issuer)));
}
