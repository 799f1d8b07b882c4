/**
 * How a remote MCP server says where people authorize (the MCP authorization spec): its `401`
 * challenge (`resource_metadata`, `scope`), its protected-resource metadata (RFC 9728, at the
 * server's path, then at the root), and its authorization server's metadata (RFC 8414 with path
 * insertion, then OpenID discovery), whose `issuer` must be the one asked for (RFC 8414 §3.3).
 * The checks are pure functions over what was read; `discoverUpstream` is the one I/O step and
 * reads only through a fetch held to the server's hosts (upstream_fetch.ts).
 */
import * as oauth from "oauth4webapi";
import { checkUpstreamUrl } from "./upstream_fetch.ts";
import { ServiceOAuthError } from "./service_oauth.ts";

/** The parameters of a `Bearer` challenge in `WWW-Authenticate` that discovery uses. */
export interface BearerChallenge {
  resourceMetadata?: string;
  scope?: string;
  error?: string;
}

/** What the server's protected-resource metadata says. */
export interface ProtectedResource {
  /** The resource identifier tokens are asked for (`resource`, RFC 8707). */
  resource: string;
  authorizationServers: string[];
  scopesSupported?: string[];
}

/** Everything needed to connect a person to the server. */
export interface UpstreamAuthorization {
  resource: string;
  server: oauth.AuthorizationServer;
  /** The scopes to ask for when the configuration names none (the 401's, else the PRM's). */
  discoveredScopes: string[];
}

/** Of the authorization servers a server's metadata lists, discovery tries the first this many. */
export const MAX_AUTHORIZATION_SERVERS = 4;

/**
 * A challenge longer than this is not read: real ones are a few hundred characters, and the
 * header comes from the remote server, which may send hundreds of kilobytes of it.
 */
export const MAX_CHALLENGE_CHARS = 8 * 1024;

/**
 * The `Bearer` challenge's parameters, or undefined when the header has no Bearer challenge (or
 * one longer than MAX_CHALLENGE_CHARS). Every pattern here runs in time linear in the header: a
 * hostile server's blanks cannot make it backtrack (two `\s*` side by side once took seconds of
 * the gateway's only thread for 60 kB of them).
 */
export function parseBearerChallenge(header: string | null): BearerChallenge | undefined {
  if (!header || header.length > MAX_CHALLENGE_CHARS) return undefined;
  const start = /(?:^|[\s,])Bearer(?=\s|,|$)/i.exec(header);
  if (!start) return undefined;
  const params: Record<string, string> = {};
  const param = /[\s,]*([A-Za-z0-9_!#$%&'*+.^`|~-]+)[ \t]*=[ \t]*("((?:[^"\\]|\\.)*)"|[^\s,"]+)/y;
  param.lastIndex = start.index + start[0].length;
  for (let match = param.exec(header); match; match = param.exec(header)) {
    const name = match[1].toLowerCase();
    // The first of a repeated name counts; later ones cannot override it.
    if (!Object.hasOwn(params, name)) {
      params[name] = match[3] !== undefined ? match[3].replace(/\\(.)/g, "$1") : match[2];
    }
  }
  return { resourceMetadata: params.resource_metadata, scope: params.scope, error: params.error };
}

/** The server's URL as a resource identifier: no fragment, no trailing slash on the bare root. */
export function canonicalResource(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = "";
  const text = copy.href;
  return copy.pathname === "/" && !copy.search ? text.slice(0, -1) : text;
}

/** Where the protected-resource metadata may be: the challenge's URL, the path, the root. */
export function protectedResourceMetadataUrls(server: URL, challenge?: BearerChallenge): URL[] {
  const urls: URL[] = [];
  if (challenge?.resourceMetadata) {
    try {
      urls.push(new URL(challenge.resourceMetadata));
    } catch { /* not a URL: the well-known places remain */ }
  }
  const path = server.pathname === "/" ? "" : server.pathname.replace(/\/$/, "");
  if (path) urls.push(new URL(`/.well-known/oauth-protected-resource${path}`, server.origin));
  urls.push(new URL("/.well-known/oauth-protected-resource", server.origin));
  return urls;
}

/**
 * Checks a protected-resource metadata document against the server it is for: its `resource`
 * must be the server's URL or a parent path of it on the same origin (RFC 9728 §3.3), and it
 * must name at least one authorization server.
 */
export function processProtectedResourceMetadata(body: unknown, server: URL): ProtectedResource {
  if (!isObject(body)) throw invalid("the protected-resource metadata is not a JSON object");
  const { resource, authorization_servers: servers, scopes_supported: scopes } = body;
  if (typeof resource !== "string") {
    throw invalid("the protected-resource metadata names no resource");
  }
  let named: URL;
  try {
    named = new URL(resource);
  } catch {
    throw invalid(`the protected-resource metadata's resource is not a URL: ${resource}`);
  }
  const own = canonicalResource(server);
  const parent = canonicalResource(named);
  const covers = named.origin === server.origin &&
    (own === parent || own.startsWith(parent.endsWith("/") ? parent : `${parent}/`));
  if (!covers || named.hash) {
    throw invalid(
      `the protected-resource metadata is for ${resource}, not for ${own}; Gatehouse uses only metadata about the server it was configured with`,
    );
  }
  if (
    !Array.isArray(servers) || servers.length === 0 ||
    !servers.every((entry) => typeof entry === "string")
  ) {
    throw invalid("the protected-resource metadata names no authorization_servers");
  }
  return {
    resource: parent,
    authorizationServers: servers,
    scopesSupported: Array.isArray(scopes) && scopes.every((s) => typeof s === "string")
      ? scopes
      : undefined,
  };
}

/**
 * Where an issuer's metadata may be, in the order the MCP spec gives: RFC 8414 with path
 * insertion, OpenID discovery with path insertion, OpenID discovery appended to the path.
 */
export function authorizationServerMetadataUrls(issuer: URL): URL[] {
  const path = issuer.pathname === "/" ? "" : issuer.pathname.replace(/\/$/, "");
  const at = (suffix: string) => new URL(suffix, issuer.origin);
  if (!path) {
    return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")];
  }
  return [
    at(`/.well-known/oauth-authorization-server${path}`),
    at(`/.well-known/openid-configuration${path}`),
    at(`${path}/.well-known/openid-configuration`),
  ];
}

/**
 * What Gatehouse needs of an authorization server before it sends anyone there: the two
 * endpoints, PKCE with S256 (the MCP spec: refuse to proceed without it), and every endpoint
 * on an allowed host over https.
 */
export function checkAuthorizationServer(
  server: oauth.AuthorizationServer,
  hosts: ReadonlySet<string>,
): void {
  if (!server.authorization_endpoint || !server.token_endpoint) {
    throw invalid(`${server.issuer} names no authorization or token endpoint`);
  }
  if (!server.code_challenge_methods_supported?.includes("S256")) {
    throw invalid(
      `${server.issuer} does not say it supports PKCE with S256 (code_challenge_methods_supported), which the MCP authorization spec requires`,
    );
  }
  for (
    const endpoint of [
      server.authorization_endpoint,
      server.token_endpoint,
      server.registration_endpoint,
      server.revocation_endpoint,
    ]
  ) {
    if (endpoint === undefined) continue;
    try {
      checkUpstreamUrl(new URL(endpoint), hosts);
    } catch (error) {
      throw invalid(
        `${server.issuer}'s endpoint ${endpoint} is refused: ${(error as Error).message}`,
      );
    }
  }
}

/** The scopes to ask for: configured, else the challenge's, else the metadata's. */
export function chooseScopes(
  configured: string[],
  challenge: BearerChallenge | undefined,
  resource: ProtectedResource,
): string[] {
  if (configured.length) return configured;
  const challenged = challenge?.scope?.split(" ").filter(Boolean) ?? [];
  if (challenged.length) return challenged;
  return resource.scopesSupported ?? [];
}

const PROBE = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "gatehouse-discovery", version: "1" },
  },
});

/**
 * Discovery as an MCP client does it. `fetch` must be held to the server's hosts
 * (upstream_fetch.ts); `hosts` is the same list, for the endpoints named in the metadata;
 * `signal` ends the whole of it (each answer has its own time limit besides).
 * Throws `ServiceOAuthError` ("invalid_response") saying what each step found.
 */
export async function discoverUpstream(
  serverUrl: URL,
  fetch: typeof globalThis.fetch,
  hosts: ReadonlySet<string>,
  configuredScopes: string[],
  signal?: AbortSignal,
): Promise<UpstreamAuthorization> {
  const failures: string[] = [];
  const challenge = await probe(serverUrl, fetch, signal).catch((error) => {
    failures.push(`the server: ${(error as Error).message}`);
    return undefined;
  });
  let resource: ProtectedResource | undefined;
  for (const url of protectedResourceMetadataUrls(serverUrl, challenge)) {
    try {
      resource = processProtectedResourceMetadata(await readJson(url, fetch, signal), serverUrl);
      break;
    } catch (error) {
      failures.push(`${url.href}: ${(error as Error).message}`);
    }
  }
  if (!resource) throw discoveryFailed(serverUrl, failures);
  // A server may list many; each costs up to three requests, to hosts the operator trusts.
  for (const issuerText of resource.authorizationServers.slice(0, MAX_AUTHORIZATION_SERVERS)) {
    let issuer: URL;
    try {
      issuer = new URL(issuerText);
      checkUpstreamUrl(issuer, hosts);
    } catch (error) {
      failures.push(`authorization server ${issuerText}: ${(error as Error).message}`);
      continue;
    }
    for (const url of authorizationServerMetadataUrls(issuer)) {
      try {
        const response = await fetch(url, { headers: { accept: "application/json" }, signal });
        const server = await oauth.processDiscoveryResponse(issuer, response);
        checkAuthorizationServer(server, hosts);
        return {
          resource: resource.resource,
          server,
          discoveredScopes: chooseScopes(configuredScopes, challenge, resource),
        };
      } catch (error) {
        failures.push(`${url.href}: ${(error as Error).message}`);
      }
    }
  }
  throw discoveryFailed(serverUrl, failures);
}

/** The server's answer to a request without a token: its challenge, when it gives one. */
async function probe(
  server: URL,
  fetch: typeof globalThis.fetch,
  signal?: AbortSignal,
): Promise<BearerChallenge | undefined> {
  const response = await fetch(server, {
    signal,
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
    },
    body: PROBE,
  });
  await response.body?.cancel();
  if (response.status !== 401) return undefined;
  return parseBearerChallenge(response.headers.get("www-authenticate"));
}

async function readJson(
  url: URL,
  fetch: typeof globalThis.fetch,
  signal?: AbortSignal,
): Promise<unknown> {
  const response = await fetch(url, { headers: { accept: "application/json" }, signal });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`answered ${response.status}`);
  }
  try {
    return await response.json();
  } catch {
    throw new Error("the answer is not JSON");
  }
}

function discoveryFailed(server: URL, failures: string[]): ServiceOAuthError {
  return new ServiceOAuthError(
    "invalid_response",
    `Gatehouse could not find how to authorize at ${server.origin}${server.pathname}: ${
      failures.slice(0, 8).join("; ")
    }`,
  );
}

function invalid(message: string): ServiceOAuthError {
  return new ServiceOAuthError("invalid_response", message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
