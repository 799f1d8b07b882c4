/**
 * The one door to the MCP SDK for the gateway.
 *
 * Under `npm:` imports the SDK's `"./*"` export maps `client/sse.js` to the declaration file
 * `dist/esm/client/sse.js.d.ts`, which does not exist, and Deno then types the module as `any`
 * without a word. Each import below names its declarations with `@ts-types` (the extension-less
 * subpath, which the same export maps to the real `.d.ts`). Everything else imports from here.
 */

// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/types"
export {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/types"
export type {
  InitializeResult,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  RequestId,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/shared/transport"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/streamableHttp"
export {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/sse"
export { SSEClientTransport, SseError } from "@modelcontextprotocol/sdk/client/sse.js";
