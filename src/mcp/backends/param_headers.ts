/**
 * `Mcp-Param-{Name}` headers (MCP 2026-07-28, streamable-http "Custom Headers from Tool
 * Parameters"): a tool whose `inputSchema` marks a property with `"x-mcp-header": "Name"`
 * wants that argument mirrored into a header on every `tools/call`, and a 2026 server refuses
 * the call (400, -32020) when it is missing. The gateway calls such a backend as a 2026 client,
 * so it keeps the marks it has seen in the backend's `tools/list` answers.
 */
import { encodeHeaderValue } from "../protocol/protocol_versions.ts";

/** One marked property: where it sits in `arguments`, and the header's name. */
export interface HeaderMark {
  path: string[];
  header: string;
}

/** RFC 9110 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVES = new Set(["string", "integer", "number", "boolean"]);
/** Past this depth a schema is not followed (a mark that deep is no header anyone sends). */
const MAX_DEPTH = 16;

/**
 * The marks of an `inputSchema`, found through chains of `properties` (the only places a mark
 * may sit). Marks that are not tokens, repeat a name or sit on a non-primitive are left out:
 * no header is sent for them, and the backend judges the call.
 */
export function headerMarks(inputSchema: unknown): HeaderMark[] {
  const marks: HeaderMark[] = [];
  const seen = new Set<string>();
  const visit = (node: unknown, path: string[]) => {
    if (typeof node !== "object" || node === null || path.length > MAX_DEPTH) return;
    const schema = node as Record<string, unknown>;
    const header = schema["x-mcp-header"];
    if (
      path.length > 0 && typeof header === "string" && TOKEN.test(header) &&
      PRIMITIVES.has(schema.type as string) && !seen.has(header.toLowerCase())
    ) {
      seen.add(header.toLowerCase());
      marks.push({ path, header });
    }
    const properties = schema.properties;
    if (typeof properties !== "object" || properties === null) return;
    for (const [key, child] of Object.entries(properties)) visit(child, [...path, key]);
  };
  visit(inputSchema, []);
  return marks;
}

/** The headers for one call: each marked argument present, as its plain or base64 text. */
export function paramHeaders(marks: readonly HeaderMark[], args: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const mark of marks) {
    let value: unknown = args;
    for (const key of mark.path) {
      value = typeof value === "object" && value !== null
        ? (value as Record<string, unknown>)[key]
        : undefined;
    }
    // Integers in decimal, booleans as true/false (an absent or null argument sends nothing).
    const text = typeof value === "string"
      ? value
      : typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))
      ? String(value)
      : undefined;
    if (text !== undefined) headers[`Mcp-Param-${mark.header}`] = encodeHeaderValue(text);
  }
  return headers;
}

/** The marks of one backend's tools, learned from its `tools/list` answers. */
export class ToolHeaderMarks {
  readonly #byTool = new Map<string, HeaderMark[]>();
  /** True once a whole listing has been read: a tool not known then has no marks. */
  complete = false;

  /** Takes the marks of each tool of a `tools/list` page. */
  learn(tools: unknown): void {
    if (!Array.isArray(tools)) return;
    for (const tool of tools) {
      if (typeof tool !== "object" || tool === null) continue;
      const { name, inputSchema } = tool as { name?: unknown; inputSchema?: unknown };
      if (typeof name === "string") this.#byTool.set(name, headerMarks(inputSchema));
    }
  }

  knows(name: string): boolean {
    return this.#byTool.has(name);
  }

  /** The marks of the tool `name`: none for a tool without any, or one not known. */
  marksOf(name: string): readonly HeaderMark[] {
    return this.#byTool.get(name) ?? [];
  }

  /** Forgets every tool (their list changed): they are read again when next needed. */
  forget(): void {
    this.#byTool.clear();
    this.complete = false;
  }

  headersFor(name: string, args: unknown): Record<string, string> {
    return paramHeaders(this.#byTool.get(name) ?? [], args);
  }
}
