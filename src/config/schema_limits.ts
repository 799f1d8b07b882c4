/**
 * The schema of what a client may cost: `limits:` (sessions, timeouts, message and buffer
 * sizes), `connections:` (how many and how slow) and `rateLimits:` (how fast). Mirrors
 * limits.ts, connections.ts and rate_limits.ts.
 */
import { DEFAULT_RATE_LIMITS } from "./rate_limits.ts";
import { count, duration, flag, type JsonSchema, rate, size } from "./schema_builders.ts";

export const LIMITS_SCHEMA: JsonSchema = {
  type: "object",
  additionalProperties: false,
  description: "Bounds that keep one client or backend from costing everyone else.",
  properties: {
    sessionsPerUser: count("Open client sessions one person may hold at once.", 10),
    maxSessions: count("Open client sessions across everyone.", 1_000),
    processesPerUser: count(
      "Stdio backend processes started for one person: one per session with share: session, one per server with share: person. A session that would need one more is refused (429).",
      10,
    ),
    maxProcesses: count(
      "Stdio backend processes across everyone, shared ones (share: person, share: all) included.",
      1_000,
    ),
    sessionIdleTimeout: duration(
      "A session with no request and no open stream for this long is ended.",
      "5m",
    ),
    requestTimeout: duration(
      "A request the backend has not answered in this long gets a JSON-RPC error.",
      "60s",
    ),
    maxMessageBytes: size(
      "Largest HTTP body or JSON-RPC message accepted from a client or a backend.",
      "4MiB",
    ),
    maxStreamBuffer: size(
      "What an SSE stream may hold for a client that reads slowly; past it the stream is cut (Streamable HTTP clients resume it). At least twice maxMessageBytes.",
      "8MiB",
    ),
    listenUris: count(
      "Resource URIs one subscriptions/listen (MCP 2026-07-28) may name in resourceSubscriptions; a listen naming more is refused with a JSON-RPC error (-32602). Each is a resources/subscribe to a 2025 backend.",
      100,
    ),
    listenUrisPerUser: count(
      "Resource URIs one person's open listens may watch at once on one gateway process; a listen that would pass it is refused (-32000) until others end.",
      1_000,
    ),
    toolsPerServer: count(
      "Tools of one server whose definitions tool integrity records (toolChanges). A server listing more has the rest left out of lists and their calls refused (served unrecorded under toolChanges: allow), with a warning: a server listing ever new names would otherwise fill the storage.",
      2_000,
    ),
    heldToolRetention: duration(
      "A held tool definition (new or changed, waiting for gatehouse tools approve) that no list has shown for this long is pruned: the server stopped listing it. A tool held as new is forgotten (listed again, it is new again); a held change of an approved tool is dropped, the approved definition stays.",
      "30d",
    ),
    pendingApprovalsPerUser: count(
      "Calls held for approval (approvals:) one person may have waiting at once; one more is refused until others are decided or expire.",
      20,
    ),
  },
};

export const CONNECTIONS_SCHEMA: JsonSchema = {
  type: "object",
  additionalProperties: false,
  description:
    "What a client connection may do before the gateway closes it: how many there may be, and how slowly a client may send its request or take its answer.",
  properties: {
    max: {
      type: "integer",
      minimum: 1,
      description:
        "Open client connections at most; more get 503 and are closed. Left out: sized from the process's open-file limit (each connection costs three descriptors; 512 are kept back), at most 10,000.",
    },
    headerTimeout: duration(
      "A request head must arrive whole within this of its first byte; else 408 (or, after earlier requests on the connection, a close). A connection that sends nothing at all is idle (idleTimeout).",
      "10s",
    ),
    bodyTimeout: duration(
      "A request body must arrive whole within this of its head; else the connection is closed.",
      "30s",
    ),
    idleTimeout: duration(
      "A connection with no request under way and no bytes either way for this long is closed, one never used too. Longer than the longest request timeout (limits.requestTimeout or a server's requestTimeout); left out: 75s, or that timeout plus 15s if that is longer.",
      "75s",
    ),
    sendTimeout: duration(
      "A client that takes none of the bytes waiting for it for this long is disconnected (a client that stopped reading).",
      "60s",
    ),
    front: flag(
      "Whether the TCP front owns the port. false: Deno.serve listens directly (a little less CPU per call), giving up the timeouts above, the connection cap, and the refusal of ambiguous request framing; only behind a proxy that enforces its own, listed in trustedProxies.",
      true,
    ),
  },
};

export const RATE_LIMITS_SCHEMA: JsonSchema = {
  type: "object",
  additionalProperties: false,
  description: "Request rates per caller, answered with 429 and Retry-After when exceeded.",
  properties: {
    mcpPerUser: rate(
      "MCP requests per person (or per bearer token).",
      DEFAULT_RATE_LIMITS.mcpPerUser,
    ),
    mcpPerClient: rate("MCP requests per OAuth client.", DEFAULT_RATE_LIMITS.mcpPerClient),
    oauthPerAddress: rate(
      "Sign-in, consent, callbacks, token and browser pages, per remote address: this many for each of /authorize (with consent), the identity provider's callbacks, the token endpoint (with /revoke) and the person's pages (/my/…, /logout), each its own bucket.",
      DEFAULT_RATE_LIMITS.oauthPerAddress,
    ),
    tokenPerClient: rate(
      "Token requests per client, counted once the client has proven itself: by its secret, or (a public client) by a valid code and PKCE verifier or refresh token. A stranger naming the client's id is not counted here.",
      DEFAULT_RATE_LIMITS.tokenPerClient,
    ),
    tokenFailuresPerAddress: rate(
      "Failed token requests (any 4xx answer) per remote address; past it every token request from that address gets 429 until the bucket refills.",
      DEFAULT_RATE_LIMITS.tokenFailuresPerAddress,
    ),
    registerPerAddress: rate(
      "Client registrations per remote address.",
      DEFAULT_RATE_LIMITS.registerPerAddress,
    ),
  },
};
