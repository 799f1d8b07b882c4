/** The resolved `approvals:` of a server (server_approvals.ts reads them; types.ts names them). */

/** Who decides a held call: the caller, or people named (never the caller themself). */
export type ApproverRule = "caller" | { emails: string[]; groups: string[] };

/** Calls of these tools wait for a person's approval before they reach the server. */
export interface ApprovalRule {
  /** Glob patterns, as `tools:` rules write them. */
  tools: string[];
  /** `when: destructive`: only tools whose annotations say `destructiveHint: true`. */
  destructiveOnly: boolean;
  by: ApproverRule;
  /** How long a held call waits for a decision. */
  timeoutMs: number;
  /** A webhook told (without the arguments) that a call waits. */
  notify?: string;
}
