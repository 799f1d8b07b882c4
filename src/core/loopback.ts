/** This machine's addresses: where plain http is accepted, for tests and local development. */

/** `localhost`, `127.x.x.x` or `[::1]` (as `URL.hostname` spells them). */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** Plain http to this machine. */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === "http:" && isLoopbackHost(url.hostname);
}
