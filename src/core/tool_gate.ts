/**
 * Which tools a session's caller may see and call: what the policy (src/policy/) builds for a
 * session and the session (src/mcp/) applies, in one shape both may import.
 */
export interface ToolGate {
  /** Whether the caller may see and call the tool the client knows as `name`. */
  allows(name: string): boolean;
}
