/**
 * Service URIs (RFC 8707 resource indicators). Server X's URI is `${baseUrl}/X`; a token's
 * audience holds exactly the URIs it may open. Clients that send the endpoint URL instead
 * (`…/X/mcp` or `…/X/sse`) name the same service, so those forms resolve to it too.
 */
import { parseServerName, type ServerName } from "../core/ids.ts";

export function serviceUri(baseUrl: string, server: ServerName): string {
  return `${baseUrl}/${server}`;
}

/** The configured server a `resource` value names, or undefined. */
export function resolveResource(
  baseUrl: string,
  resource: string,
  isConfigured: (name: ServerName) => boolean,
): ServerName | undefined {
  if (!resource.startsWith(`${baseUrl}/`) || resource.length > 2048) return undefined;
  const rest = resource.slice(baseUrl.length + 1);
  const match = /^([^/?#]+)(?:\/(?:mcp|sse))?\/?$/.exec(rest);
  const name = match ? parseServerName(match[1]) : undefined;
  return name && isConfigured(name) ? name : undefined;
}
