/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension) as the gateway meets it on the wire: a
 * tool names its interactive UI, a `ui://` resource of its own server, in `_meta.ui.resourceUri`
 * (older servers: `_meta["ui/resourceUri"]`, or OpenAI's `_meta["openai/outputTemplate"]`), and
 * the host reads that resource and renders it. The gateway never reads or runs the HTML; it only
 * keeps the names straight: behind an aggregate each member's `ui://` URIs gain the member's
 * name (`ui://get-time/app.html` of member `react` is `ui://react/get-time/app.html`), so two
 * members' UIs never collide, and the name alone says whose it is and what it was.
 */

/** The extension's id in `capabilities.extensions`. */
export const UI_EXTENSION = "io.modelcontextprotocol/ui";
/** The MIME type of an MCP App's HTML. */
export const UI_MIME_TYPE = "text/html;profile=mcp-app";

/**
 * What the gateway declares when it is the client itself (a stdio process shared by several
 * sessions, a 2026 client's link): any of its clients may render UIs, and one that does not
 * loses nothing, since an App's tool answers with content of its own as every tool does.
 */
export const UI_CLIENT_EXTENSIONS = { [UI_EXTENSION]: { mimeTypes: [UI_MIME_TYPE] } };

const SCHEME = "ui://";

/** The keys of a tool's `_meta` that name its UI resource. */
const TOOL_UI_KEYS = ["ui/resourceUri", "openai/outputTemplate"] as const;

/**
 * OpenAI's keys that say what a tool's UI may do: `openai/widgetAccessible` lets the UI call
 * tools (what `ui.visibility` with "app" says), `openai/visibility` hides the tool from the model.
 */
const TOOL_UI_SETTINGS = ["openai/widgetAccessible", "openai/visibility"] as const;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether `uri` names a UI: `ui://`, the scheme in any case (RFC 3986 §3.1). */
export function isUiUri(uri: unknown): uri is string {
  return typeof uri === "string" && uri.slice(0, SCHEME.length).toLowerCase() === SCHEME;
}

/**
 * A `ui://` URI as a server that reads it as a URL takes it (the SDKs look a resource up by
 * `new URL(uri).href`): blanks around it gone, the scheme in lower case, `.` and `..` segments
 * (`%2e` spelled too) resolved; undefined for any other URI. A refusal that compared the URI as
 * sent would let `ui://x/y/../app.html` or `UI://x/app.html` read what `ui://x/app.html` may not.
 */
export function canonicalUiUri(uri: unknown): string | undefined {
  if (typeof uri !== "string") return undefined;
  let href: string;
  try {
    href = new URL(uri).href;
  } catch {
    return isUiUri(uri) ? uri : undefined;
  }
  return href.startsWith(SCHEME) ? href : undefined;
}

/**
 * What every spelling of one UI resource has in common, for deciding whether it is withheld:
 * canonical, without the fragment (no part of what a server is asked for), percent-escapes
 * decoded (some servers decode them before looking up) and made canonical again.
 */
export function uiUriKey(uri: unknown): string | undefined {
  const canonical = canonicalUiUri(uri)?.split("#")[0];
  if (canonical === undefined) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(canonical);
  } catch {
    return canonical;
  }
  return canonicalUiUri(decoded)?.split("#")[0] ?? decoded;
}

/** A member's `ui://` URI as its aggregate names it; any other URI as it is. */
export function aggregateUiUri(member: string, uri: string): string {
  return isUiUri(uri) ? `${SCHEME}${member}/${uri.slice(SCHEME.length)}` : uri;
}

/**
 * The member and its own URI for a `ui://<member>/…` URI of an aggregate, when `<member>` is
 * one of `members`; undefined for anything else (another scheme, no such member). The rest is
 * passed on as sent (a member may look its URIs up as plain strings); judge it by uiUriKey.
 */
export function memberUiUri(
  uri: unknown,
  members: { has(name: string): boolean },
): { member: string; uri: string } | undefined {
  if (!isUiUri(uri)) return undefined;
  const rest = uri.slice(SCHEME.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return undefined;
  const member = rest.slice(0, slash);
  if (!members.has(member)) return undefined;
  return { member, uri: `${SCHEME}${rest.slice(slash + 1)}` };
}

/** The `ui://` URIs a tool definition names for its UI. */
export function toolUiUris(tool: Json): string[] {
  const meta = tool._meta;
  if (!isObject(meta)) return [];
  const found = new Set<string>();
  if (isObject(meta.ui) && isUiUri(meta.ui.resourceUri)) found.add(meta.ui.resourceUri);
  for (const key of TOOL_UI_KEYS) if (isUiUri(meta[key])) found.add(meta[key] as string);
  return [...found];
}

/**
 * The tool with every UI URI of its `_meta` passed through `map`: a new object where one
 * changed (the rest of `_meta`, `ui.csp`, `ui.domains` and the like shared as they were), the
 * same object where none did.
 */
export function mapToolUiUris(tool: Json, map: (uri: string) => string): Json {
  const meta = tool._meta;
  if (!isObject(meta) || toolUiUris(tool).length === 0) return tool;
  const next: Json = { ...meta };
  if (isObject(meta.ui) && isUiUri(meta.ui.resourceUri)) {
    next.ui = { ...meta.ui, resourceUri: map(meta.ui.resourceUri) };
  }
  for (const key of TOOL_UI_KEYS) if (isUiUri(meta[key])) next[key] = map(meta[key] as string);
  return { ...tool, _meta: next };
}

/**
 * The part of a tool's `_meta` that says which UI it shows and how (`ui`, the older keys naming
 * its resource, OpenAI's settings of what the UI may do), with its UI URIs passed through `map`;
 * undefined when it has none.
 * Tool integrity compares it: a server that swaps the UI of an approved tool changes the tool.
 */
export function uiMetaOf(
  tool: Json,
  map: (uri: string) => string = (uri) => uri,
): Json | undefined {
  const mapped = mapToolUiUris(tool, map)._meta;
  if (!isObject(mapped)) return undefined;
  const kept: Json = {};
  if (mapped.ui !== undefined) kept.ui = mapped.ui;
  for (const key of [...TOOL_UI_KEYS, ...TOOL_UI_SETTINGS]) {
    if (mapped[key] !== undefined) kept[key] = mapped[key];
  }
  return Object.keys(kept).length ? kept : undefined;
}
