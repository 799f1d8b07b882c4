/**
 * The `requestState` the gateway gives a 2026 client with an `input_required` result that
 * stands for a 2025 backend's waiting requests. The client holds it and echoes it on the
 * retry, so it is attacker input: sealed with AES-256-GCM under a key of its own purpose
 * ("mcp-request-state"), and bound to the person, the server, the method and a digest of the
 * original params, with the reference of the waiting backend request and an expiry. Opening
 * refuses anything else with a stable code. A state is not one-time by itself: the waiting
 * request it names is answered once, and a replay finds it gone.
 */
import type { Clock } from "../../core/clock.ts";
import { GatehouseError } from "../../core/errors.ts";
import type { ServerName, UserId } from "../../core/ids.ts";
import { seal, unseal } from "../../crypto/aead.ts";
import { sha256Base64Url } from "../../crypto/base64url.ts";
import { errorResponse, type RequestId, type RpcResponse } from "../protocol/jsonrpc.ts";
import { canonicalJson, isObject, type Json, without } from "./json_shape.ts";
import { ModernErrorCode } from "../protocol/protocol_versions.ts";

export type RequestStateErrorCode =
  /** Not a state this gateway sealed: forged, tampered with, cut, or under another key. */
  | "request_state_invalid"
  | "request_state_expired"
  | "request_state_other_person"
  | "request_state_other_server"
  /** Sealed for another method or other params than the retry's. */
  | "request_state_other_request";

export class RequestStateError extends GatehouseError<RequestStateErrorCode> {}

/** What a state is bound to: the request it was issued for, and whose. */
export interface RequestStateBinding {
  person: UserId;
  server: ServerName;
  method: string;
  /** The request's params; the retry's own retry params and `_meta` do not count. */
  params: Json | undefined;
}

export interface OpenedRequestState {
  /**
   * The reference given to sealRequestState: a waiting backend request's, or a 2026 backend's
   * own state (stateless_passage.ts).
   */
  pending: string;
  expiresAt: number;
}

/** Associated data: a state opens only as a request state of this format. */
const PURPOSE = "gatehouse/mcp-request-state/v1";
/**
 * Anything longer is refused before decryption. A state of the gateway's own is far smaller;
 * one that carries a 2026 backend's state (stateless_passage.ts) grows with it.
 */
export const MAX_STATE_CHARS = 65_536;

/** The digest of a request's params that a state binds: same params, any key order. */
export async function paramsDigest(params: Json | undefined): Promise<string> {
  const bound = without(params ?? {}, ["_meta", "inputResponses", "requestState"]);
  return await sha256Base64Url(canonicalJson(bound));
}

/** A sealed state for `binding`, naming `pending`, valid for `ttlMs` on `clock`. */
export async function sealRequestState(
  key: CryptoKey,
  clock: Clock,
  binding: RequestStateBinding,
  pending: string,
  ttlMs: number,
): Promise<string> {
  const claims = {
    person: binding.person,
    server: binding.server,
    method: binding.method,
    digest: await paramsDigest(binding.params),
    pending,
    expiresAt: clock.now() + ttlMs,
  };
  return await seal(key, JSON.stringify(claims), PURPOSE);
}

/**
 * The state's contents when it was sealed by one of `keys` for exactly `expected` and has
 * not expired; otherwise a RequestStateError saying which.
 */
export async function openRequestState(
  keys: CryptoKey[],
  clock: Clock,
  sealed: unknown,
  expected: RequestStateBinding,
): Promise<OpenedRequestState> {
  const claims = typeof sealed === "string" && sealed.length <= MAX_STATE_CHARS
    ? parseClaims(await unseal(keys, sealed, PURPOSE))
    : undefined;
  if (!claims) {
    throw new RequestStateError("request_state_invalid", "requestState was not issued here");
  }
  if (claims.person !== expected.person) {
    throw new RequestStateError("request_state_other_person", "requestState is another person's");
  }
  if (claims.server !== expected.server) {
    throw new RequestStateError("request_state_other_server", "requestState is another server's");
  }
  if (
    claims.method !== expected.method || claims.digest !== await paramsDigest(expected.params)
  ) {
    throw new RequestStateError(
      "request_state_other_request",
      "requestState was issued for another method or other params",
    );
  }
  if (clock.now() >= claims.expiresAt) {
    throw new RequestStateError("request_state_expired", "requestState has expired");
  }
  return { pending: claims.pending, expiresAt: claims.expiresAt };
}

interface Claims {
  person: string;
  server: string;
  method: string;
  digest: string;
  pending: string;
  expiresAt: number;
}

function parseClaims(text: string | undefined): Claims | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || typeof value.expiresAt !== "number") return undefined;
  const strings = ["person", "server", "method", "digest", "pending"];
  return strings.every((name) => typeof value[name] === "string")
    ? value as unknown as Claims
    : undefined;
}

const NEXT_STEP = "send the original request again without requestState and inputResponses";

/**
 * The client's answer to a refused state: -32602 (in-band, as 2026 servers answer a bad
 * state), saying what to do next and nothing about whose the state was.
 */
export function requestStateRefusal(id: RequestId, error: RequestStateError): RpcResponse {
  const shown: RequestStateErrorCode =
    error.code === "request_state_expired" || error.code === "request_state_other_request"
      ? error.code
      : "request_state_invalid";
  const why = shown === "request_state_expired"
    ? "requestState has expired"
    : shown === "request_state_other_request"
    ? "requestState belongs to a request with another method or other params"
    : "requestState failed its integrity check";
  return errorResponse(id, ModernErrorCode.invalidParams, `${why}: ${NEXT_STEP}`, {
    reason: shown,
  }) as RpcResponse;
}
