/**
 * A URL elicitation the gateway sends a client itself (an approval page: approvals/call_hold.ts),
 * not one a backend asked, carries under this `_meta` key the error a client that cannot be
 * asked for a URL gets instead: a 2026 request that did not declare `elicitation.url` is told
 * the page in that error (front/stateless_calls.ts), as a 2025 client without URL elicitation
 * is, rather than refused for a capability it need not have.
 */
import type { RpcErrorBody } from "./credential_errors.ts";

export const UNASKABLE_META = "io.gatehouse/ifUnaskable";

/** The error stated for clients that cannot be asked `request`; undefined for a backend's. */
export function unaskableError(
  request: { params?: Record<string, unknown> },
): RpcErrorBody | undefined {
  const meta = request.params?._meta as Record<string, unknown> | undefined;
  const error = meta?.[UNASKABLE_META] as RpcErrorBody | undefined;
  return typeof error?.code === "number" && typeof error.message === "string" ? error : undefined;
}
