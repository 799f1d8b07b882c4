/**
 * `listen:`, `baseUrl:` and `allowedOrigins:`: where the gateway listens, the URL people and
 * clients reach it at, and which browser origins besides its own may call it.
 */
import { isLoopbackHost, isLoopbackHttp } from "../core/loopback.ts";
import { Checker, describe } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";

const DEFAULT_LISTEN = "127.0.0.1:8080";

export function parseListen(
  c: Checker,
  value: unknown,
  path: ConfigPath = ["listen"],
): { hostname: string; port: number } {
  const text = value === undefined ? DEFAULT_LISTEN : String(value);
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match) {
    c.fail(path, `expected host:port, got ${describe(value)}`, 'write e.g. "127.0.0.1:8080"');
    return { hostname: "127.0.0.1", port: 8080 };
  }
  if (port > 65535) {
    c.fail(path, `port ${port} is out of range`, "a port is a number from 1 to 65535");
    return { hostname: "127.0.0.1", port: 8080 };
  }
  return { hostname: match[1].replace(/^\[|\]$/g, ""), port };
}

export function parseBaseUrl(
  c: Checker,
  value: unknown,
  listen: { hostname: string; port: number },
) {
  if (value === undefined) {
    const host = listen.hostname === "0.0.0.0" || listen.hostname === "::"
      ? "localhost"
      : listen.hostname;
    return `http://${host.includes(":") ? `[${host}]` : host}:${listen.port}`;
  }
  const text = c.string(value, ["baseUrl"]);
  if (text === undefined) return "http://localhost:8080";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    c.fail(["baseUrl"], `not a URL: ${describe(text)}`, 'write e.g. "https://mcp.example.com"');
    return text;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    c.fail(["baseUrl"], "must be an http or https URL");
  }
  if (url.search || url.hash) {
    c.fail(["baseUrl"], "must not have a query or fragment", "the public URL of the gateway only");
  }
  warnOfOtherLocalPort(c, url, listen.port);
  return url.origin + url.pathname.replace(/\/+$/, "");
}

/**
 * A baseUrl on this machine whose port is not the one listened on is most likely left over from
 * an earlier `listen:` (clients then get links and an Origin check for the wrong address), but
 * may be a local proxy in front: said, not refused. Port 0 (any free port) cannot be compared.
 */
function warnOfOtherLocalPort(c: Checker, url: URL, listenPort: number): void {
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  if (!isLoopbackHost(url.hostname) || listenPort === 0 || port === listenPort) return;
  c.warn(
    ["baseUrl"],
    `is on this machine at port ${port}, but listen: gives port ${listenPort}`,
    "leave baseUrl out to have it follow listen: (and --port), or make the ports agree; keep it only if a local proxy listens there",
  );
}

/** With oauth configured, tokens and login cookies travel to `baseUrl`: it must be https. */
export function requireHttpsForOAuth(c: Checker, baseUrl: string): void {
  // An unparsable baseUrl is reported already; only a valid one is checked here.
  if (URL.canParse(baseUrl) && isPlainHttpElsewhere(new URL(baseUrl))) {
    c.fail(
      ["baseUrl"],
      "must be https when oauth is configured",
      "tokens and login cookies must not travel in clear; http is accepted for localhost only",
    );
  }
}

export function parseOrigins(c: Checker, value: unknown): string[] {
  return c.stringList(value, ["allowedOrigins"]).flatMap((text, i) => {
    try {
      const url = new URL(text);
      if (url.origin !== "null" && url.pathname === "/" && !url.search) return [url.origin];
    } catch { /* reported below */ }
    c.fail(
      ["allowedOrigins", i],
      `not an origin: ${describe(text)}`,
      'an origin is scheme://host[:port], e.g. "https://app.example.com"',
    );
    return [];
  });
}

/** Plain http to a host other than this machine. */
function isPlainHttpElsewhere(url: URL): boolean {
  return url.protocol === "http:" && !isLoopbackHttp(url);
}
