/**
 * Which tools a session's caller may see and call: what the policy (src/policy/) builds for a
 * session and the session (src/mcp/) applies, in one shape both may import.
 */
export interface ToolGate {
  /** Whether the caller may see and call the tool the client knows as `name`. */
  allows(name: string): boolean;
}

/**
 * The longest tool name MCP 2025-11-25 asks for. An aggregate lists a longer `member.tool` cut
 * to this length (src/mcp/aggregate/names.ts), so a listed name this long may not be the name
 * the policy speaks of: the aggregate judges those by their full names itself.
 */
export const MAX_TOOL_NAME_LENGTH = 128;
