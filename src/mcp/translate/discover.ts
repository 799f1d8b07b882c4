/**
 * `initialize` ⇄ `server/discover`: what a 2026 client learns about a 2025 backend from the
 * `InitializeResult` the gateway got when it opened the backend's session, and what a 2025
 * client is told at `initialize` about a 2026 backend from its `DiscoverResult`.
 *
 * Tasks do not cross: 2025's experimental `tasks` capability and 2026's
 * `io.modelcontextprotocol/tasks` extension have different methods, and the gateway relays
 * neither, so each is left out of the other revision's advertisement.
 */
import { negotiateProtocolVersion } from "../protocol/protocol_versions.ts";
import { isObject, type Json, without } from "./json_shape.ts";
import {
  MetaKey,
  MODERN_PROTOCOL_VERSIONS,
  servedProtocolVersions,
} from "../protocol/protocol_versions.ts";

const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** A 2025 server's capabilities as a 2026 client may see them: everything but `tasks`. */
export function serverCapabilitiesFor2026(capabilities: unknown): Json {
  return isObject(capabilities) ? without(capabilities, ["tasks"]) : {};
}

/** A 2026 server's capabilities as a 2025 client may see them: without the tasks extension. */
export function serverCapabilitiesFor2025(capabilities: unknown): Json {
  if (!isObject(capabilities)) return {};
  if (!isObject(capabilities.extensions)) return capabilities;
  const extensions = without(capabilities.extensions, [TASKS_EXTENSION]);
  if (Object.keys(extensions).length === 0) return without(capabilities, ["extensions"]);
  return { ...capabilities, extensions };
}

/**
 * The `server/discover` answer for a 2025 backend: every revision the gateway's URL serves
 * (the modern ones on the backend's behalf, the session ones after `initialize`: the same list
 * a -32022 refusal gives as `supported`, which a client may hold to this one), the backend's
 * capabilities and instructions, its identity in `_meta`, and the safe cache hints.
 */
export function discoverFromInitialize(initialize: Json): Json {
  const meta = isObject(initialize._meta) ? initialize._meta : {};
  const result: Json = {
    resultType: "complete",
    supportedVersions: servedProtocolVersions(),
    capabilities: serverCapabilitiesFor2026(initialize.capabilities),
    ttlMs: 0,
    cacheScope: "private",
  };
  if (typeof initialize.instructions === "string") result.instructions = initialize.instructions;
  result._meta = isObject(initialize.serverInfo)
    ? { ...meta, [MetaKey.serverInfo]: initialize.serverInfo }
    : meta;
  if (Object.keys(result._meta as Json).length === 0) delete result._meta;
  return result;
}

/**
 * The `server/discover` answer while the person has not connected the server's credential
 * (nothing can be asked of the backend yet): tools only, the words saying where to connect as
 * its instructions, and nothing cached (`ttlMs` 0), so the client asks again once connected.
 * Its calls are then answered with the page to open (`input_required` with a URL elicitation
 * where the client takes one), which a refused `server/discover` could never lead to.
 */
export function discoverBeforeCredential(instructions: string): Json {
  return {
    resultType: "complete",
    supportedVersions: servedProtocolVersions(),
    capabilities: { tools: {} },
    instructions,
    ttlMs: 0,
    cacheScope: "private",
  };
}

/**
 * The `InitializeResult` for a 2025 client in front of a 2026 backend: the session revision
 * the client asked for when the gateway speaks it (else its newest), the backend's
 * capabilities and instructions, and `serverInfo` out of the discover `_meta`, or `fallback`
 * when the backend named none (2025 requires one).
 */
export function initializeFromDiscover(
  discover: Json,
  requestedVersion: unknown,
  fallback: Json,
): Json {
  const meta = isObject(discover._meta) ? discover._meta : {};
  const serverInfo = isObject(meta[MetaKey.serverInfo]) ? meta[MetaKey.serverInfo] : fallback;
  const result: Json = {
    protocolVersion: negotiateProtocolVersion(requestedVersion),
    capabilities: serverCapabilitiesFor2025(discover.capabilities),
    serverInfo,
  };
  if (typeof discover.instructions === "string") result.instructions = discover.instructions;
  const rest = without(meta, [MetaKey.serverInfo]);
  if (Object.keys(rest).length > 0) result._meta = rest;
  return result;
}

/**
 * The revision to speak to a 2026 backend: the newest of the gateway's modern revisions that
 * its `supportedVersions` lists; undefined when they share none.
 */
export function pickModernVersion(supportedVersions: unknown): string | undefined {
  if (!Array.isArray(supportedVersions)) return undefined;
  return MODERN_PROTOCOL_VERSIONS.find((version) => supportedVersions.includes(version));
}

/**
 * A 2026 backend's own `server/discover` result as the gateway's URL answers it: the revisions
 * listed are the gateway's to name (it serves 2025 sessions in front of that backend too, and
 * refuses any other 2026 revision itself); the rest is the backend's, as it wrote it.
 */
export function discoverAtGateway(result: unknown): unknown {
  return isObject(result) ? { ...result, supportedVersions: servedProtocolVersions() } : result;
}
