/**
 * The `x-mcp-header` marks of a backend's tools, as one stateless link knows them: which
 * arguments of a `tools/call` a 2026-07-28 client mirrors into `Mcp-Param-{Name}` headers, so
 * the front can hold those headers to the body as the revision requires of a server. Learned
 * from every tools/list answer the link carries; a call of a tool not among them reads the
 * whole list once (bounded in pages); a `tools/list_changed` makes them read again.
 */
import type { RpcResponse } from "../protocol/jsonrpc.ts";
import { type HeaderMark, ToolHeaderMarks } from "../backends/param_headers.ts";

export type { HeaderMark } from "../backends/param_headers.ts";

/** Pages of tools/list read for marks at most: a backend's list that never ends is cut here. */
const MAX_MARK_PAGES = 20;

export class LinkToolMarks {
  readonly #marks = new ToolHeaderMarks();
  #learning?: Promise<void>;

  /** `listTools` asks the backend for one page of tools/list, from `cursor` when given. */
  constructor(private readonly listTools: (cursor?: string) => Promise<RpcResponse>) {}

  /** Takes the marks of a tools/list answer the link carried (for a client or for itself). */
  heard(response: RpcResponse): void {
    const result = response.result as { tools?: unknown } | undefined;
    this.#marks.learn(result?.tools);
  }

  /** The marks of the tool `name`; none for a tool the backend does not list. */
  async of(name: string): Promise<readonly HeaderMark[]> {
    if (!this.#marks.knows(name) && !this.#marks.complete) {
      await (this.#learning ??= this.#learn().finally(() => this.#learning = undefined));
    }
    return this.#marks.marksOf(name);
  }

  /** The backend's tools changed: their marks are read again when next needed. */
  forget(): void {
    this.#marks.forget();
  }

  async #learn(): Promise<void> {
    let cursor: string | undefined;
    for (let page = 0; page < MAX_MARK_PAGES; page++) {
      const response = await this.listTools(cursor).catch(() => undefined);
      if (!response?.result) break;
      this.heard(response);
      const next = (response.result as { nextCursor?: unknown }).nextCursor;
      if (typeof next !== "string") break;
      cursor = next;
    }
    this.#marks.complete = true;
  }
}
