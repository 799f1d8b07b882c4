/**
 * `Mcp-Param-{Name}` headers against the body (MCP 2026-07-28, streamable-http "Server
 * Behavior for Custom Headers"): a tool whose `inputSchema` marks an argument with
 * `x-mcp-header` has its client mirror that argument into a header, so that a proxy or load
 * balancer may route on it; a server that reads the body must refuse (400, -32020) a call
 * whose header is missing while the argument is present, does not decode, carries characters a
 * header value may not, or disagrees with the argument. Headers of no mark are not the
 * gateway's to judge and pass unread. The marks come from the backend's own tool list
 * (link_tool_marks.ts).
 */
import {
  decodeHeaderValue,
  encodeHeaderValue,
  ModernErrorCode,
} from "../protocol/protocol_versions.ts";
import type { RequestId, RpcRequest } from "../protocol/jsonrpc.ts";
import type { StatelessLink } from "../stateless/stateless_links.ts";
import type { HeaderMark } from "../stateless/link_tool_marks.ts";
import {
  headerMismatch,
  type HeaderReader,
  missingHeader,
  quote,
  readHeader,
  type Refusal,
  refuse,
} from "./envelope.ts";

/** What a plain (not base64) header value may hold: visible ASCII, spaces and tabs inside. */
const PLAIN_VALUE = /^[\x20-\x7e\t]*$/;
/** A decimal number as a header carries an integer argument (`42`, `-7`; `42.0` compares equal). */
const DECIMAL = /^[+-]?\d+(?:\.\d+)?$/;

/** The first `Mcp-Param-*` header that does not hold to `args`, as the refusal; else undefined. */
export function paramHeaderProblem(
  marks: readonly HeaderMark[],
  args: unknown,
  headers: HeaderReader,
  id: RequestId,
): Refusal | undefined {
  for (const mark of marks) {
    const problem = markProblem(mark, valueAt(args, mark.path), headers, id);
    if (problem) return problem;
  }
  return undefined;
}

function markProblem(
  mark: HeaderMark,
  value: unknown,
  headers: HeaderReader,
  id: RequestId,
): Refusal | undefined {
  const header = `Mcp-Param-${mark.header}`;
  const source = `the body's params.arguments.${mark.path.join(".")}`;
  const expected = headerText(value);
  const raw = readHeader(headers, header);
  if (raw === null) {
    // An argument that is absent or null is mirrored by no header; any other value must be.
    return expected === undefined ? undefined : missingHeader(header, expected, source, id);
  }
  const decoded = decodeHeaderValue(raw);
  if (decoded === undefined || (decoded === raw && !PLAIN_VALUE.test(raw))) {
    return refuse(
      400,
      ModernErrorCode.headerMismatch,
      `Bad Request: ${header} header ${quote(raw)} ` +
        "is neither plain visible ASCII nor valid =?base64?…?= (padded base64 of UTF-8 bytes); " +
        (expected === undefined
          ? `omit it, as ${source} is absent`
          : `send ${header}: ${encodeHeaderValue(expected)}, ${source}`),
      { header, received: raw },
      id,
    );
  }
  if (expected === undefined) {
    return refuse(
      400,
      ModernErrorCode.headerMismatch,
      `Bad Request: ${header} header ${quote(raw)} mirrors no value: ${source} is absent, null ` +
        `or not a string, integer or boolean; omit the header`,
      { header, expected: null, received: raw },
      id,
    );
  }
  if (sameValue(decoded, value)) return undefined;
  const note = decoded === raw ? "" : ` (decoded ${quote(decoded)})`;
  return headerMismatch(header, raw, expected, source, id, note);
}

/** The argument at `path` in `args`; undefined where the path leads nowhere. */
function valueAt(args: unknown, path: readonly string[]): unknown {
  let value = args;
  for (const key of path) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** The header text a client sends for `value`, or undefined when it sends none. */
function headerText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A header's decoded text against the argument: numbers compare as numbers (`42.0` is 42). */
function sameValue(decoded: string, value: unknown): boolean {
  if (typeof value === "number") return DECIMAL.test(decoded) && Number(decoded) === value;
  return decoded === headerText(value);
}

/**
 * The refusal of a `tools/call` whose `Mcp-Param-*` headers do not hold to its arguments, by
 * the marks of the tool as `link`'s backend lists it; undefined for any other request.
 */
export async function paramRefusal(
  link: StatelessLink,
  message: RpcRequest,
  headers: HeaderReader,
): Promise<Refusal | undefined> {
  if (message.method !== "tools/call") return undefined;
  const name = message.params?.name;
  if (typeof name !== "string") return undefined;
  const marks = await link.toolMarks.of(name);
  if (marks.length === 0) return undefined;
  return paramHeaderProblem(marks, message.params?.arguments, headers, message.id);
}
