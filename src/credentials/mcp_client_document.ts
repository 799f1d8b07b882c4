/**
 * Gatehouse's client ID metadata document for remote MCP servers (`kind: mcp`): the URL is the
 * client id, and the document, served by Gatehouse itself, lists the callback of every such
 * server. An authorization server that advertises `client_id_metadata_document_supported`
 * fetches it instead of asking Gatehouse to register. The URL must be https to be a client id;
 * plain http is offered only on this machine (tests, local development).
 */
import type { ServerConfig } from "../config/types.ts";
import { isLoopbackHttp } from "../core/loopback.ts";

export const UPSTREAM_CLIENT_PATH = "/oauth/upstream-client";

/** The document's URL (the client id), or undefined when baseUrl cannot carry one. */
export function upstreamClientDocumentUrl(baseUrl: string): string | undefined {
  const url = new URL(baseUrl);
  if (url.protocol !== "https:" && !isLoopbackHttp(url)) return undefined;
  return `${baseUrl.replace(/\/$/, "")}${UPSTREAM_CLIENT_PATH}`;
}

/** The document: a public client (PKCE) with the callbacks of every `kind: mcp` server. */
export function upstreamClientDocument(
  baseUrl: string,
  servers: Iterable<ServerConfig>,
): Record<string, unknown> | undefined {
  const clientId = upstreamClientDocumentUrl(baseUrl);
  if (!clientId) return undefined;
  const base = baseUrl.replace(/\/$/, "");
  return {
    client_id: clientId,
    client_name: "Gatehouse",
    client_uri: base,
    redirect_uris: [...servers]
      .filter((server) => server.userToken?.kind === "mcp")
      .map((server) => `${base}/oauth/callback/${server.name}`),
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}
