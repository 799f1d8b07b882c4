/**
 * Whether Deno's `fetch` would send a request to `url` through a proxy (HTTP_PROXY,
 * HTTPS_PROXY, NO_PROXY, in either case). The gateway's own HTTP client does not speak to
 * proxies, so backends behind one keep going through `fetch`, exactly as before.
 */
let env: { http?: string; https?: string; noProxy: string[] } | undefined;

function read(name: string): string | undefined {
  try {
    return Deno.env.get(name) || Deno.env.get(name.toLowerCase()) || undefined;
  } catch {
    return undefined; // no --allow-env: fetch would see no proxy either
  }
}

export function proxied(url: URL): boolean {
  env ??= {
    http: read("HTTP_PROXY"),
    https: read("HTTPS_PROXY"),
    noProxy: (read("NO_PROXY") ?? "").split(",").map((e) => e.trim().toLowerCase()).filter(Boolean),
  };
  const proxy = url.protocol === "https:" ? env.https : env.http;
  return proxy !== undefined && !bypassed(url, env.noProxy);
}

/** NO_PROXY: `*`, a host (with or without port), or a domain (`example.com`, `.example.com`). */
export function bypassed(url: URL, noProxy: string[]): boolean {
  const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return noProxy.some((entry) => {
    if (entry === "*") return true;
    // host, host:port, [v6], [v6]:port, or a bare IPv6 address (colons, no port).
    const bracketed = /^\[(.*)\](?::(\d+))?$/.exec(entry);
    const single = !bracketed && entry.split(":").length === 2 ? entry.split(":") : undefined;
    const name = bracketed?.[1] ?? single?.[0] ?? entry;
    const port = bracketed?.[2] ?? single?.[1];
    if (port && port !== (url.port || (url.protocol === "https:" ? "443" : "80"))) return false;
    const domain = name.replace(/^\*?\./, "");
    return host === domain || host.endsWith(`.${domain}`);
  });
}
