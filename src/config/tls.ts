/**
 * The `tls:` section: HTTPS served by the gateway itself, from certificate files (`cert`,
 * `key`) or from an ACME certificate authority (`acme:`), and `redirectHttp`, the plain-HTTP
 * listener that answers 308 to https and serves ACME HTTP-01 challenges. The files themselves
 * are read and checked where they are used (src/net/tls/), not here: validation reads no files.
 */
import { type Checker, describe } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import type { TlsConfig } from "./types.ts";

export const LETS_ENCRYPT_DIRECTORY = "https://acme-v02.api.letsencrypt.org/directory";
const DEFAULT_RENEW_BEFORE_MS = 30 * 24 * 3600_000;

export function parseTls(c: Checker, value: unknown, baseUrl: string): TlsConfig | undefined {
  if (value === undefined || value === null) return undefined;
  const raw = c.object(value, ["tls"], ["cert", "key", "acme", "redirectHttp"]);
  if (!raw) return undefined;
  const tls: TlsConfig = {};
  if (baseUrl.startsWith("http:")) {
    c.warn(
      ["baseUrl"],
      "is http but tls: serves https: the URLs Gatehouse hands out (OAuth metadata, resource URIs) would name http",
      "set baseUrl to the https URL clients use, e.g. https://mcp.example.com",
    );
  }
  if (raw.redirectHttp !== undefined) {
    tls.redirectHttp = parseListenAddress(c, raw.redirectHttp, ["tls", "redirectHttp"]);
  }
  const files = raw.cert !== undefined || raw.key !== undefined;
  if (files && raw.acme !== undefined) {
    c.fail(
      ["tls", "acme"],
      "give either cert and key, or acme, not both",
      "cert and key serve certificate files you manage; acme obtains and renews them itself",
    );
  } else if (files) {
    const certFile = c.string(raw.cert, ["tls", "cert"], "the certificate chain, a PEM file");
    const keyFile = c.string(raw.key, ["tls", "key"], "the certificate's private key, a PEM file");
    if (certFile && keyFile) tls.files = { certFile, keyFile };
  } else if (raw.acme !== undefined) {
    tls.acme = parseAcme(c, raw.acme, baseUrl);
    if (tls.acme && !tls.redirectHttp) {
      c.fail(
        ["tls", "redirectHttp"],
        "is required with acme: the certificate authority checks the HTTP-01 challenge on port 80",
        'write redirectHttp: ":80" (the systemd unit may bind it: AmbientCapabilities=CAP_NET_BIND_SERVICE)',
      );
    }
  } else {
    c.fail(["tls"], "needs cert and key, or acme", "see docs/deploy.md, HTTPS without a proxy");
  }
  return tls;
}

function parseAcme(c: Checker, value: unknown, baseUrl: string): TlsConfig["acme"] {
  const path: ConfigPath = ["tls", "acme"];
  const raw = c.object(value, path, ["directory", "email", "caRoots", "renewBefore"]);
  if (!raw) return undefined;
  const directory = raw.directory === undefined
    ? LETS_ENCRYPT_DIRECTORY
    : c.httpsUrl(raw.directory, [...path, "directory"]);
  const email = c.optionalString(raw.email, [...path, "email"]);
  if (email !== undefined && !/^[^@\s]+@[^@\s]+$/.test(email)) {
    c.fail([...path, "email"], `not an email address: ${describe(email)}`);
  }
  const caRootsFile = c.optionalString(raw.caRoots, [...path, "caRoots"]);
  const renewBeforeMs = c.duration(
    raw.renewBefore,
    [...path, "renewBefore"],
    DEFAULT_RENEW_BEFORE_MS,
  );
  let domain: string | undefined;
  if (URL.canParse(baseUrl)) {
    const url = new URL(baseUrl);
    domain = url.hostname;
    if (url.protocol !== "https:") {
      c.fail(["baseUrl"], "must be https with tls.acme", "the certificate is for baseUrl's host");
    } else if (/^[\d.]+$/.test(domain) || domain.startsWith("[")) {
      c.fail(
        ["baseUrl"],
        "must name a host, not an IP address, with tls.acme",
        "certificate authorities issue certificates for DNS names",
      );
    }
  }
  if (!directory || !domain) return undefined;
  return { directory, email, caRootsFile, renewBeforeMs, domain };
}

/** `":80"` (every interface) or `"10.0.0.5:80"`. */
export function parseListenAddress(
  c: Checker,
  value: unknown,
  path: ConfigPath,
): { hostname: string; port: number } | undefined {
  const text = typeof value === "string" || typeof value === "number" ? String(value) : "";
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)?:(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) {
    c.fail(
      path,
      `expected [host]:port, got ${describe(value)}`,
      'write e.g. ":80" or "10.0.0.5:80"',
    );
    return undefined;
  }
  return { hostname: match[1]?.replace(/^\[|\]$/g, "") ?? "0.0.0.0", port };
}
