/**
 * Origin validation for MCP endpoints (the spec's defence against DNS rebinding): a request
 * that carries an Origin must come from the gateway's own origin or a configured one. With a
 * loopback base URL, the loopback names of the same port count as the gateway's own.
 */
const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

export function allowedOriginSet(baseUrl: string, configured: string[]): Set<string> {
  const base = new URL(baseUrl);
  const allowed = new Set([base.origin, ...configured]);
  if (LOOPBACK_HOSTS.includes(base.hostname)) {
    const port = base.port ? `:${base.port}` : "";
    for (const host of LOOPBACK_HOSTS) allowed.add(`${base.protocol}//${host}${port}`);
  }
  return allowed;
}

export function isOriginAllowed(origin: string | null, allowed: Set<string>): boolean {
  return origin === null || allowed.has(origin);
}
