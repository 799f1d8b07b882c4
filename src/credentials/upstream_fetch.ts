/**
 * Every HTTP call Gatehouse makes to a remote MCP server's authorization machinery (its
 * protected-resource metadata, its authorization server's metadata, registration, token and
 * revocation endpoints) goes through this fetch: only to the hosts the operator configured (the
 * server's own and `authorizationHosts`), https only (plain http to this machine only), never
 * following a redirect, and with the whole answer bounded in time and size. A hostile server
 * can name any URL in its metadata; this is what keeps Gatehouse from calling it.
 */
import type { Clock } from "../core/clock.ts";
import { GatehouseError } from "../core/errors.ts";
import { isLoopbackHost } from "../core/loopback.ts";
import { readAllCapped } from "../core/streams.ts";
import { withTimeout } from "../core/timeout_signal.ts";

/** A call to an upstream's authorization machinery gives up after this long. */
export const UPSTREAM_TIMEOUT_MS = 10_000;
/** No metadata document or token answer is longer than this. */
export const UPSTREAM_MAX_BYTES = 64 * 1024;

export type UpstreamRefusalCode =
  | "host_not_allowed"
  | "insecure"
  | "redirect"
  | "too_large";

/** A URL or an answer Gatehouse will not use; the message names what and what to do. */
export class UpstreamRefusal extends GatehouseError<UpstreamRefusalCode> {}

export interface UpstreamFetchPolicy {
  /** Host names (lower case) that may be called. */
  hosts: ReadonlySet<string>;
  clock: Clock;
  timeoutMs?: number;
  maxBytes?: number;
  /** The fetch underneath; `fetch` by default. */
  fetch?: typeof globalThis.fetch;
}

/** Throws `UpstreamRefusal` for a URL outside the policy (pure: no I/O). */
export function checkUpstreamUrl(url: URL, hosts: ReadonlySet<string>): void {
  const host = url.hostname.toLowerCase();
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(host))) {
    throw new UpstreamRefusal(
      "insecure",
      `${url.origin} is not https; Gatehouse sends credentials over https only (plain http only to this machine)`,
    );
  }
  if (url.username || url.password) {
    throw new UpstreamRefusal("insecure", `${url.origin} carries a user name or password`);
  }
  if (!hosts.has(host)) {
    throw new UpstreamRefusal(
      "host_not_allowed",
      `${host} is neither the server's own host nor in its userToken.authorizationHosts; add it there if the server really uses it`,
    );
  }
}

/** A fetch held to the policy; its answers are read whole (bounded) before they are returned. */
export function upstreamFetch(policy: UpstreamFetchPolicy): typeof globalThis.fetch {
  const base = policy.fetch ?? globalThis.fetch;
  const maxBytes = policy.maxBytes ?? UPSTREAM_MAX_BYTES;
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    checkUpstreamUrl(url, policy.hosts);
    return await withTimeout(
      policy.clock,
      policy.timeoutMs ?? UPSTREAM_TIMEOUT_MS,
      async (timeout) => {
        const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
        const response = await base(input, { ...init, redirect: "manual", signal });
        if (response.status >= 300 && response.status < 400) {
          await response.body?.cancel();
          throw new UpstreamRefusal(
            "redirect",
            `${url.origin}${url.pathname} answered with a redirect (${response.status}), which Gatehouse does not follow`,
          );
        }
        const bytes = await readAllCapped(response.body, maxBytes);
        if (!bytes) {
          throw new UpstreamRefusal(
            "too_large",
            `${url.origin}${url.pathname} answered with more than ${maxBytes} bytes`,
          );
        }
        const empty = [101, 204, 205, 304].includes(response.status);
        return new Response(empty ? null : bytes as Uint8Array<ArrayBuffer>, {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
        });
      },
    );
  };
}
