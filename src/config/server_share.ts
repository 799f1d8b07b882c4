/**
 * Who shares one stdio process (`share:`), how many serve everyone (`processes:`), and how long
 * an unused shared process is kept (`processIdleTimeout:`). A process shared by everyone must
 * not carry anyone's values: `{{user.*}}` in its `args` or `env`, or a person's token, would
 * hand one person's identity to all, so `share: all` refuses what the per-person rule
 * (per_person.ts) calls carried; and since everyone then shares the program's state, `check`
 * says so.
 */
import { type Checker, describe, type Dict } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import { personalReasons } from "./per_person.ts";
import type { BackendProtocol, ShareMode, StdioServerConfig } from "./types.ts";

/** The values of `share:`, the default first. */
export const SHARE_MODES: readonly ShareMode[] = ["session", "person", "all"];
export const SHARE_KEYS = ["share", "processes", "processIdleTimeout"];
export const DEFAULT_PROCESS_IDLE_TIMEOUT_MS = 5 * 60_000;

export interface ShareSettings {
  share: ShareMode;
  processes: number;
  processIdleTimeoutMs: number;
}

export function parseShare(
  c: Checker,
  path: ConfigPath,
  raw: Dict,
  given: StdioServerConfig & { protocol: BackendProtocol },
): ShareSettings {
  const share = parseMode(c, raw.share, [...path, "share"]);
  const processes = c.positiveInteger(raw.processes, [...path, "processes"], 1);
  if (raw.processes !== undefined && share !== "all") {
    c.fail(
      [...path, "processes"],
      "processes applies only with share: all",
      "say share: all for a pool of processes serving everyone, or leave processes out",
    );
  }
  const processIdleTimeoutMs = c.duration(
    raw.processIdleTimeout,
    [...path, "processIdleTimeout"],
    DEFAULT_PROCESS_IDLE_TIMEOUT_MS,
  );
  if (share !== "session" && given.protocol === "2026-07-28") {
    c.fail(
      [...path, "share"],
      `share: ${share} needs a backend that speaks MCP 2025-11-25`,
      "a 2026-07-28 backend keeps no session state per client; say share: session (or protocol: 2025-11-25)",
    );
  }
  if (share === "all") checkEveryone(c, path, { ...given, share });
  return { share, processes, processIdleTimeoutMs };
}

function parseMode(c: Checker, value: unknown, path: ConfigPath): ShareMode {
  if (value === undefined) return "session";
  if (SHARE_MODES.includes(value as ShareMode)) return value as ShareMode;
  c.fail(path, `unknown share mode ${describe(value)}`, `one of: ${SHARE_MODES.join(", ")}`);
  return "session";
}

/** `share: all`: nothing of one person's may reach the process everyone uses. */
function checkEveryone(c: Checker, path: ConfigPath, server: StdioServerConfig): void {
  const hint =
    "a process shared by everyone cannot carry one person's values: say share: person, or take the placeholder out";
  const said = new Set<string>();
  for (const reason of personalReasons(server)) {
    // requiresUserToken and userToken give one reason; each placeholder has a place of its own.
    const once = reason.path.length > 1 ? reason.path.join(".") : reason.why;
    if (!reason.carried || said.has(once)) continue;
    said.add(once);
    c.fail(
      [...path, ...reason.path],
      `share: all cannot carry one person's values: ${reason.why}`,
      hint,
    );
  }
  c.warn(
    [...path, "share"],
    "everyone's sessions share the same processes: whatever the server keeps (files, memory, caches, logins) is seen by every person",
    "use share: all only for servers that keep no per-person state; share: person keeps people apart",
  );
}
