/**
 * Tool-name patterns: `*` matches any run of characters (none too, dots and slashes
 * included, so `*` also spans an aggregate's `member.` prefix), `?` exactly one; everything
 * else matches itself, case and all (MCP tool names are case-sensitive). A list of patterns
 * becomes one anchored expression, built once per configuration.
 */

/** One expression matching a name whole when any of `patterns` does; undefined for none. */
export function compileGlobs(patterns: readonly string[]): RegExp | undefined {
  if (patterns.length === 0) return undefined;
  const alternatives = [...new Set(patterns)].map((pattern) =>
    [...pattern].map((char) =>
      char === "*" ? "[^]*" : char === "?" ? "[^]" : char.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")
    ).join("")
  );
  // `u`: `?` is one character even outside the Basic Multilingual Plane.
  return new RegExp(`^(?:${alternatives.join("|")})$`, "u");
}
