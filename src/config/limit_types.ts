/** The resolved `limits:` (limits.ts reads them; types.ts names them with the rest). */

export interface Limits {
  /** Open client sessions one user may hold at once. */
  sessionsPerUser: number;
  /** Open client sessions across everyone. */
  maxSessions: number;
  /** Stdio processes started for one person (a session's own, or their shared one). */
  processesPerUser: number;
  /** Stdio processes across everyone, shared ones included. */
  maxProcesses: number;
  /** A session with no request and no open stream for this long is ended. */
  sessionIdleTimeoutMs: number;
  /** A request the backend has not answered in this long gets a JSON-RPC error. */
  requestTimeoutMs: number;
  /** Largest HTTP body or JSON-RPC message accepted from a client or a backend. */
  maxMessageBytes: number;
  /**
   * Bytes an SSE stream may hold for a client that reads more slowly than its backend writes;
   * past it the stream is cut (a Streamable HTTP client resumes it with Last-Event-ID).
   */
  maxStreamBufferBytes: number;
  /** Resource URIs one `subscriptions/listen` may name in `resourceSubscriptions`. */
  listenUris: number;
  /** Resource URIs one person's open listens may watch at once, on one gateway process. */
  listenUrisPerUser: number;
  /** Tools of one server tool integrity records; the rest are judged unrecorded. */
  toolsPerServer: number;
  /** A held tool definition no list has shown for this long is pruned (the server dropped it). */
  heldToolRetentionMs: number;
  /** Held calls (`approvals:`) one person may have waiting at once. */
  pendingApprovalsPerUser: number;
}
