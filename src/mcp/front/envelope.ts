/**
 * What a 2026-07-28 request must carry, and the refusal for each thing it lacks: the `_meta`
 * envelope (-32602), the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers (-32020),
 * a served version (-32022), a method the revision still has (404 / -32601). Each message
 * says what is wrong and what to send instead. `revision.ts` decides which checks run.
 */
import { isObject } from "../translate/json_shape.ts";
import { type RequestId, RpcErrorCode } from "../protocol/jsonrpc.ts";
import {
  decodeHeaderValue,
  encodeHeaderValue,
  isLogLevel,
  isModernProtocolVersion,
  LOG_LEVELS,
  MetaKey,
  MODERN_PROTOCOL_VERSIONS,
  ModernErrorCode,
  REQUIRED_META_KEYS,
  servedProtocolVersions,
  SESSION_PROTOCOL_VERSIONS,
} from "../protocol/protocol_versions.ts";

/** The answer instead of a lane: HTTP `status` with a JSON-RPC error echoing `id`. */
export interface Refusal {
  lane: "refused";
  status: number;
  code: number;
  message: string;
  data?: unknown;
  id: RequestId | null;
}

/** What is read of a request's headers: `Headers` fits (names case-insensitive). */
export interface HeaderReader {
  get(name: string): string | null;
}

export type Fields = Record<string, unknown>;

export function refuse(
  status: number,
  code: number,
  message: string,
  data?: unknown,
  id: RequestId | null = null,
): Refusal {
  return data === undefined
    ? { lane: "refused", status, code, message, id }
    : { lane: "refused", status, code, message, data, id };
}

/** The checks of a claimed `_meta`: the required keys first, then the type of each key. */
export function envelopeProblem(meta: Fields, id: RequestId | null): Refusal | undefined {
  const missing = REQUIRED_META_KEYS.filter((key) => meta[key] === undefined);
  if (missing.length > 0) return envelopeMissing(missing, "", id);
  if (typeof meta[MetaKey.protocolVersion] !== "string") return badClaim(id);
  if (!isObject(meta[MetaKey.clientCapabilities])) {
    return badKey(MetaKey.clientCapabilities, "must be an object ({} when it offers none)", id);
  }
  const info = meta[MetaKey.clientInfo];
  const named = isObject(info) && typeof info.name === "string" &&
    typeof info.version === "string";
  if (info !== undefined && !named) {
    return badKey(MetaKey.clientInfo, "must be an object with a string name and version", id);
  }
  const level = meta[MetaKey.logLevel];
  if (level !== undefined && !isLogLevel(level)) {
    const levels = LOG_LEVELS.join(", ");
    return badKey(
      MetaKey.logLevel,
      `${quote(level)} is not a log level; send one of ${levels}, or none for no log messages`,
      id,
    );
  }
  return undefined;
}

/** A claim that makes even `initialize` a 2026 request: a 2026 version in a sound envelope. */
export function isValidModernClaim(meta: Fields | undefined): boolean {
  const claim = meta?.[MetaKey.protocolVersion];
  return typeof claim === "string" && isModernProtocolVersion(claim) &&
    envelopeProblem(meta!, null) === undefined;
}

/** A 2026 header on a request without the claim: never the session lane, which would misread it. */
export function missingClaim(meta: Fields | undefined, header: string, id: RequestId): Refusal {
  const missing = meta === undefined
    ? ["_meta"]
    : REQUIRED_META_KEYS.filter((key) => meta[key] === undefined);
  return envelopeMissing(
    missing,
    `the MCP-Protocol-Version header names ${quote(header)}, but `,
    id,
  );
}

const ENVELOPE_HINT = `an MCP ${MODERN_PROTOCOL_VERSIONS[0]} request carries ` +
  `${MetaKey.protocolVersion} (its revision) and ${MetaKey.clientCapabilities} ({} when the ` +
  `client offers none) in params._meta`;

function envelopeMissing(missing: string[], cause: string, id: RequestId | null): Refusal {
  const what = missing[0] === "_meta"
    ? "the request has no params._meta"
    : `params._meta lacks ${missing.join(" and ")}`;
  const message = `Invalid params: ${cause}${what}; ${ENVELOPE_HINT}`;
  return refuse(400, RpcErrorCode.invalidParams, message, { envelope: { missing } }, id);
}

export function badClaim(id: RequestId | null): Refusal {
  return badKey(MetaKey.protocolVersion, 'must be a string such as "2026-07-28"', id);
}

function badKey(key: string, problem: string, id: RequestId | null): Refusal {
  const message = `Invalid params: params._meta ${key} ${problem}`;
  return refuse(400, RpcErrorCode.invalidParams, message, { envelope: { key } }, id);
}

export function versionMismatch(header: string, version: string, id: RequestId | null): Refusal {
  const source = `the body's params._meta ${MetaKey.protocolVersion}`;
  return headerMismatch("MCP-Protocol-Version", header, version, source, id);
}

/** A header that disagrees with the body; `note` adds what the header decoded to. */
export function headerMismatch(
  header: string,
  received: string,
  expected: string,
  source: string,
  id: RequestId | null,
  note = "",
): Refusal {
  return refuse(
    400,
    ModernErrorCode.headerMismatch,
    `Bad Request: ${header} header ${quote(received)}${note} does not match ${source} ` +
      `${quote(expected)}; send ${header}: ${asHeader(header, expected)}`,
    { header, expected, received },
    id,
  );
}

/** A required header that is absent; `source` names the body value it mirrors. */
export function missingHeader(
  header: string,
  expected: string,
  source: string,
  id: RequestId,
): Refusal {
  return refuse(
    400,
    ModernErrorCode.headerMismatch,
    `Bad Request: the ${header} header is missing; send ${header}: ` +
      `${asHeader(header, expected)}, ${source}`,
    { header, expected, received: null },
    id,
  );
}

export function unsupportedVersion(version: string, id: RequestId | null): Refusal {
  return refuse(
    400,
    ModernErrorCode.unsupportedProtocolVersion,
    `Unsupported protocol version: this gateway does not serve ${quote(version)}; send ` +
      `${MODERN_PROTOCOL_VERSIONS.join(" or ")} in params._meta and MCP-Protocol-Version, or ` +
      `open a session with initialize for ${SESSION_PROTOCOL_VERSIONS.join(", ")}`,
    { supported: servedProtocolVersions(), requested: version },
    id,
  );
}

/** `Mcp-Name` against the body's name or uri: present, decodable, equal once decoded. */
export function nameHeaderProblem(
  raw: string | null,
  field: string,
  name: string,
  id: RequestId,
): Refusal | undefined {
  const source = `the body's params.${field}`;
  if (raw === null) return missingHeader("Mcp-Name", name, source, id);
  const decoded = decodeHeaderValue(raw);
  if (decoded === undefined) {
    return refuse(
      400,
      ModernErrorCode.headerMismatch,
      `Bad Request: Mcp-Name header ${quote(raw)} is not valid =?base64?…?= (padded base64 ` +
        `of UTF-8 bytes); send Mcp-Name: ${encodeHeaderValue(name)}, ${source}`,
      { header: "Mcp-Name", expected: name, received: raw },
      id,
    );
  }
  if (decoded === name) return undefined;
  const note = decoded === raw ? "" : ` (decoded ${quote(decoded)})`;
  return headerMismatch("Mcp-Name", raw, name, source, id, note);
}

/** A header value without the optional whitespace around it (RFC 9110 §5.5). */
export function readHeader(headers: HeaderReader, name: string): string | null {
  const value = headers.get(name);
  return value === null ? null : trimOws(value);
}

export function trimOws(value: string): string {
  // `Headers` has trimmed already; other readers may not. No copy in the usual case.
  const first = value.charCodeAt(0);
  const last = value.charCodeAt(value.length - 1);
  if (first !== 0x20 && first !== 0x09 && last !== 0x20 && last !== 0x09) return value;
  return value.replace(/^[ \t]+|[ \t]+$/g, "");
}

/** Mcp-Name and Mcp-Param-* carry what is not plain ASCII in base64; other headers as is. */
function asHeader(header: string, value: string): string {
  return header === "Mcp-Name" || header.startsWith("Mcp-Param-")
    ? encodeHeaderValue(value)
    : value;
}

/** A value quoted for a message, cut short: headers and names come from the client. */
export function quote(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  return JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);
}
