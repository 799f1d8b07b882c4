/**
 * How a missing person's credential reaches an MCP client: a URL-mode elicitation error
 * (MCP 2025-11-25, code -32042) for clients that said they can open URLs, so the client offers
 * the page to the person; for every other client a plain error whose message names the page.
 */
import type { CredentialRequiredError } from "../../core/credential_required.ts";
import { randomHex } from "../../crypto/random.ts";
import { RpcErrorCode } from "./jsonrpc.ts";

export const URL_ELICITATION_REQUIRED = -32042;

export interface RpcErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

/** True when the client's initialize capabilities include `elicitation.url`. */
export function supportsUrlElicitation(capabilities: unknown): boolean {
  const elicitation = (capabilities as { elicitation?: unknown } | undefined)?.elicitation;
  return typeof elicitation === "object" && elicitation !== null &&
    typeof (elicitation as { url?: unknown }).url === "object";
}

export function credentialRpcError(
  error: CredentialRequiredError,
  urlElicitation: boolean,
): RpcErrorBody {
  if (!urlElicitation) {
    return {
      code: RpcErrorCode.backendError,
      message: error.message,
      data: { reason: error.code, service: error.service, url: error.pageUrl },
    };
  }
  return {
    code: URL_ELICITATION_REQUIRED,
    message: error.message,
    data: {
      elicitations: [{
        mode: "url",
        elicitationId: randomHex(16),
        url: error.pageUrl,
        message: error.message,
      }],
    },
  };
}
