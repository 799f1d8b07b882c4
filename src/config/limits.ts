/**
 * The `limits:` section: how many sessions (and stdio processes) a person and everyone may hold,
 * how long a session may idle and a request may wait, how large a message and a stream's buffer
 * may grow, how many resource URIs a 2026 client's listens may watch, and how many tools of a
 * server tool integrity records.
 */
import type { Checker } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import type { Limits } from "./types.ts";

export const DEFAULT_LIMITS: Limits = {
  sessionsPerUser: 10,
  maxSessions: 1_000,
  // As many as sessions by default: a process per session never hit these before sessions did.
  processesPerUser: 10,
  maxProcesses: 1_000,
  sessionIdleTimeoutMs: 5 * 60_000,
  requestTimeoutMs: 60_000,
  maxMessageBytes: 4 * 1_048_576,
  maxStreamBufferBytes: 8 * 1_048_576,
  listenUris: 100,
  listenUrisPerUser: 1_000,
  toolsPerServer: 2_000,
  heldToolRetentionMs: 30 * 86_400_000,
  pendingApprovalsPerUser: 20,
};

const LIMIT_KEYS = [
  "sessionsPerUser",
  "maxSessions",
  "processesPerUser",
  "maxProcesses",
  "sessionIdleTimeout",
  "requestTimeout",
  "maxMessageBytes",
  "maxStreamBuffer",
  "listenUris",
  "listenUrisPerUser",
  "toolsPerServer",
  "heldToolRetention",
  "pendingApprovalsPerUser",
];

export function parseLimits(c: Checker, value: unknown): Limits {
  const raw = c.object(value, ["limits"], LIMIT_KEYS) ?? {};
  const at = (key: string): ConfigPath => ["limits", key];
  const maxMessageBytes = c.size(
    raw.maxMessageBytes,
    at("maxMessageBytes"),
    DEFAULT_LIMITS.maxMessageBytes,
  );
  // A stream keeps half its buffer to replay from, and that half must hold any one message.
  const smallestBuffer = 2 * maxMessageBytes;
  const maxStreamBufferBytes = c.size(
    raw.maxStreamBuffer,
    at("maxStreamBuffer"),
    Math.max(DEFAULT_LIMITS.maxStreamBufferBytes, smallestBuffer),
  );
  if (maxStreamBufferBytes < smallestBuffer) {
    c.fail(
      at("maxStreamBuffer"),
      `must be at least twice limits.maxMessageBytes (${smallestBuffer} bytes)`,
      "raise it, or leave it out to get the smallest that fits",
    );
  }
  return {
    sessionsPerUser: c.positiveInteger(
      raw.sessionsPerUser,
      at("sessionsPerUser"),
      DEFAULT_LIMITS.sessionsPerUser,
    ),
    maxSessions: c.positiveInteger(raw.maxSessions, at("maxSessions"), DEFAULT_LIMITS.maxSessions),
    processesPerUser: c.positiveInteger(
      raw.processesPerUser,
      at("processesPerUser"),
      DEFAULT_LIMITS.processesPerUser,
    ),
    maxProcesses: c.positiveInteger(
      raw.maxProcesses,
      at("maxProcesses"),
      DEFAULT_LIMITS.maxProcesses,
    ),
    sessionIdleTimeoutMs: c.duration(
      raw.sessionIdleTimeout,
      at("sessionIdleTimeout"),
      DEFAULT_LIMITS.sessionIdleTimeoutMs,
    ),
    requestTimeoutMs: c.duration(
      raw.requestTimeout,
      at("requestTimeout"),
      DEFAULT_LIMITS.requestTimeoutMs,
    ),
    maxMessageBytes,
    maxStreamBufferBytes,
    listenUris: c.positiveInteger(raw.listenUris, at("listenUris"), DEFAULT_LIMITS.listenUris),
    listenUrisPerUser: c.positiveInteger(
      raw.listenUrisPerUser,
      at("listenUrisPerUser"),
      DEFAULT_LIMITS.listenUrisPerUser,
    ),
    toolsPerServer: c.positiveInteger(
      raw.toolsPerServer,
      at("toolsPerServer"),
      DEFAULT_LIMITS.toolsPerServer,
    ),
    heldToolRetentionMs: c.duration(
      raw.heldToolRetention,
      at("heldToolRetention"),
      DEFAULT_LIMITS.heldToolRetentionMs,
    ),
    pendingApprovalsPerUser: c.positiveInteger(
      raw.pendingApprovalsPerUser,
      at("pendingApprovalsPerUser"),
      DEFAULT_LIMITS.pendingApprovalsPerUser,
    ),
  };
}
