/**
 * Which MCP revision a backend speaks, learned the way MCP 2026-07-28 says a client learns it
 * (versioning §Backward Compatibility; the SDK's `classifyProbeOutcome`): ask `server/discover`
 * with a 2026 envelope. A discover result offering 2026-07-28 means 2026; an error answer, or
 * an HTTP 4xx, means 2025 (the spec forbids keying the fallback to one code). What says nothing
 * about the revision (401 or 403, a 5xx, an HTTP backend that cannot be reached or stays
 * silent) gives no verdict. The verdict is remembered per server in `RevisionMemory`.
 */
import type { BackendProtocol, BackendServerConfig } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import { StreamableHTTPError } from "../../sdk.ts";
import { classify, type RequestId, type RpcResponse } from "../protocol/jsonrpc.ts";
import {
  isModernProtocolVersion,
  MODERN_PROTOCOL_VERSIONS,
} from "../protocol/protocol_versions.ts";
import { pickModernVersion } from "../translate/discover.ts";
import { isObject, type Json } from "../translate/json_shape.ts";
import { messageFor2026Backend, sessionMetaFromInitialize } from "../translate/request_meta.ts";
import type { ModernWire, WireAnswer } from "./modern_wire.ts";

export type Revision = "2025-11-25" | "2026-07-28";

export type Verdict =
  /** It speaks 2026: `version` is the revision to speak, `discover` its answer. */
  | { revision: "2026-07-28"; version: string; discover: Json }
  /** It speaks 2025 (it refused discover, or on stdio said nothing); `why` says how. */
  | { revision: "2025-11-25"; why: string; silent?: true }
  /** Nothing learned: the backend could not be asked (`why` says what happened). */
  | { revision: undefined; why: string };

/** What came of asking: an answer, a failure (thrown by the wire), or silence. */
export type ProbeOutcome =
  | { answer: WireAnswer }
  | { failure: Error & { status?: number } }
  | { silentMs: number };

/** The verdict on one probe outcome (pure; `kind` is the wire's). */
export function verdictOf(kind: "stdio" | "http", outcome: ProbeOutcome): Verdict {
  if ("silentMs" in outcome) {
    const why = `it did not answer server/discover within ${outcome.silentMs / 1000}s`;
    // On stdio silence is how an older server ignores a method it lacks; over HTTP an outage.
    return kind === "stdio"
      ? { revision: "2025-11-25", why, silent: true }
      : { revision: undefined, why };
  }
  if ("failure" in outcome) {
    const status = outcome.failure.status;
    const why = outcome.failure.message;
    if (kind === "stdio") return { revision: "2025-11-25", why: `server/discover failed: ${why}` };
    if (status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403) {
      return { revision: "2025-11-25", why: `it answered server/discover with HTTP ${status}` };
    }
    return { revision: undefined, why };
  }
  const { response, status } = outcome.answer;
  if (status !== undefined && (status === 401 || status === 403 || status >= 500)) {
    return { revision: undefined, why: `it answered server/discover with HTTP ${status}` };
  }
  if (response.error) {
    const { code, message } = response.error;
    return {
      revision: "2025-11-25",
      why: `it answered server/discover with error ${code} (${message.slice(0, 200)})`,
    };
  }
  const result = response.result ?? {};
  const version = pickModernVersion(result.supportedVersions);
  if (version !== undefined) return { revision: "2026-07-28", version, discover: result };
  const offered = Array.isArray(result.supportedVersions)
    ? `it offers ${result.supportedVersions.join(", ") || "nothing"}`
    : "its answer lists no supportedVersions";
  return {
    revision: "2025-11-25",
    why: `${offered} in server/discover, none of ${MODERN_PROTOCOL_VERSIONS.join(", ")}`,
  };
}

export interface ProbeOptions {
  /** The id the discover request goes under (one the session never uses). */
  id: RequestId;
  /** How long to wait for the answer: an HTTP backend silent for this long is an outage. */
  timeoutMs: number;
  clock: Clock;
  /** Stops asking (the answer no longer matters). */
  signal?: AbortSignal;
}

/**
 * Asks `server/discover` with the envelope the client's `initialize` params give, and judges
 * the outcome. Never throws.
 */
export async function probeRevision(
  wire: ModernWire,
  initializeParams: unknown,
  options: ProbeOptions,
): Promise<Verdict> {
  const meta = sessionMetaFromInitialize(initializeParams, MODERN_PROTOCOL_VERSIONS[0]);
  const request = messageFor2026Backend(
    { jsonrpc: "2.0" as const, id: options.id, method: "server/discover", params: {} },
    meta,
  );
  const abort = new AbortController();
  const timer = options.clock.setTimeout(() => abort.abort(), options.timeoutMs);
  options.signal?.addEventListener("abort", () => abort.abort(), { once: true });
  try {
    const answer = await wire.call(request, { signal: abort.signal });
    return verdictOf(wire.kind, { answer });
  } catch (error) {
    if (abort.signal.aborted) return verdictOf(wire.kind, { silentMs: options.timeoutMs });
    return verdictOf(wire.kind, { failure: error as Error });
  } finally {
    timer.clear();
  }
}

type RpcError = NonNullable<RpcResponse["error"]>;

/**
 * What the client is told when the backend refused a 2025 `initialize` (`why` says how, and
 * what asking `server/discover` then gave): when the refusal lists only newer revisions, the
 * backend's name, what it speaks and the setting to change; otherwise its own words.
 */
export function refusalMessage(
  server: string,
  protocol: BackendProtocol,
  error: RpcError,
  why: string,
): string {
  const supported = isObject(error.data) && Array.isArray(error.data.supported)
    ? error.data.supported.filter((version): version is string => typeof version === "string")
    : [];
  if (!supported.some(isModernProtocolVersion)) return error.message;
  return `the backend "${server}" speaks only MCP ${supported.join(", ")} (${why}); ` +
    (protocol === "2025-11-25"
      ? "its configuration says protocol: 2025-11-25: set protocol: auto (or 2026-07-28)"
      : "the gateway could not reach it as a 2026-07-28 server either");
}

/** The JSON-RPC error in an HTTP 4xx refusal the SDK's transport threw, if it carries one. */
export function httpRefusal(error: unknown): RpcError | undefined {
  const status = error instanceof StreamableHTTPError ? error.code ?? 0 : 0;
  if (status < 400 || status >= 500) return undefined;
  const text = (error as Error).message;
  const at = text.indexOf("{");
  if (at < 0) return undefined;
  try {
    const classified = classify(JSON.parse(text.slice(at)));
    return classified?.kind === "response" ? classified.message.error : undefined;
  } catch {
    return undefined;
  }
}

/** Verdicts per backend: learned once, kept, forgotten when they stop holding. */
export class RevisionMemory {
  /** Bounded: keys change only with the configuration. */
  static readonly MAX_ENTRIES = 4_096;
  readonly #known = new Map<string, Revision>();

  get(key: string): Revision | undefined {
    return this.#known.get(key);
  }

  remember(key: string, revision: Revision): void {
    this.#known.delete(key);
    this.#known.set(key, revision);
    if (this.#known.size > RevisionMemory.MAX_ENTRIES) {
      this.#known.delete(this.#known.keys().next().value!);
    }
  }

  forget(key: string): void {
    this.#known.delete(key);
  }
}

/**
 * What a verdict is remembered under: the server and where it is reached, so a reload that
 * points a server elsewhere learns again.
 */
export function revisionKey(server: BackendServerConfig): string {
  const where = server.transport === "stdio"
    ? [server.command, ...server.args, server.cwd ?? ""]
    : [server.url];
  return JSON.stringify([server.name, server.transport, ...where]);
}
