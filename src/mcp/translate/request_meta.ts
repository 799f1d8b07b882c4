/**
 * The per-request `_meta` envelope of 2026. Toward a 2026 backend, a 2025 client's requests
 * carry what its session settled once: the client's identity and capabilities from
 * `initialize` and the level from `logging/setLevel`. Toward a 2025 backend, a 2026 client's
 * requests lose the envelope keys (its session settled those) and keep every other key.
 */
import { isObject, type Json, metaOf, withMeta, without } from "./json_shape.ts";
import {
  isLogLevel,
  type LogLevel,
  MetaKey,
  REQUEST_META_KEYS,
} from "../protocol/protocol_versions.ts";

/** What a 2025 session settled that a 2026 backend needs on each request. */
export interface SessionMeta {
  /** The revision the gateway speaks to the backend (see pickModernVersion). */
  protocolVersion: string;
  clientCapabilities: Json;
  clientInfo?: Json;
  /** From `logging/setLevel`; absent until the client sets one (no logs until then). */
  logLevel?: LogLevel;
}

/** Params a 2026 request carries for `input_required` retries; nothing a 2025 backend reads. */
const RETRY_PARAMS = ["inputResponses", "requestState"];
const RETRY_PARAMS_AND_META = [...RETRY_PARAMS, "_meta"];

/** A 2025 client's capabilities as a 2026 request declares them: everything but `tasks`. */
export function clientCapabilitiesFor2026(capabilities: unknown): Json {
  return isObject(capabilities) ? without(capabilities, ["tasks"]) : {};
}

/** The envelope of a session from its `initialize` params. */
export function sessionMetaFromInitialize(
  initializeParams: unknown,
  protocolVersion: string,
): SessionMeta {
  const params = isObject(initializeParams) ? initializeParams : {};
  const session: SessionMeta = {
    protocolVersion,
    clientCapabilities: clientCapabilitiesFor2026(params.capabilities),
  };
  if (isObject(params.clientInfo)) session.clientInfo = params.clientInfo;
  return session;
}

/**
 * The session's envelope after a `logging/setLevel`; undefined when the level is not one of
 * the eight (the client's request then gets -32602 and nothing changes).
 */
export function withLogLevel(
  session: SessionMeta,
  setLevelParams: unknown,
): SessionMeta | undefined {
  const level = isObject(setLevelParams) ? setLevelParams.level : undefined;
  return isLogLevel(level) ? { ...session, logLevel: level } : undefined;
}

/** The session's envelope as `_meta` keys. */
export function envelopeOf(session: SessionMeta): Json {
  const meta: Json = {
    [MetaKey.protocolVersion]: session.protocolVersion,
    [MetaKey.clientCapabilities]: session.clientCapabilities,
  };
  if (session.clientInfo) meta[MetaKey.clientInfo] = session.clientInfo;
  if (session.logLevel) meta[MetaKey.logLevel] = session.logLevel;
  return meta;
}

interface WithParams {
  params?: Record<string, unknown>;
}

/**
 * A 2025 client's request or notification as it goes to a 2026 backend: the session's
 * envelope in `params._meta`, beside the client's own keys (`progressToken`, …). The
 * envelope wins over a client's key of the same name: it must agree with the headers the
 * gateway sends.
 */
export function messageFor2026Backend<T extends WithParams>(message: T, session: SessionMeta): T {
  const params = message.params ?? {};
  const meta = { ...metaOf(params), ...envelopeOf(session) };
  return { ...message, params: withMeta(params, meta) };
}

/**
 * A 2026 client's request or notification as it goes to a 2025 backend: without the
 * envelope keys in `params._meta` and without the retry params (`inputResponses`,
 * `requestState`), which the gateway answers itself. `progressToken` and every other key stay;
 * params left empty are left out.
 */
export function messageFor2025Backend<T extends WithParams>(message: T): T {
  if (!message.params) return message;
  const meta = metaOf(message.params);
  const stripped = without(message.params, meta ? RETRY_PARAMS_AND_META : RETRY_PARAMS);
  const kept = meta && without(meta, REQUEST_META_KEYS);
  if (kept && Object.keys(kept).length > 0) stripped._meta = kept;
  if (Object.keys(stripped).length > 0) return { ...message, params: stripped };
  // Every 2026 request has params (for `_meta`); a 2025 one without anything in them has none.
  const { params: _envelope, ...rest } = message;
  return rest as T;
}
