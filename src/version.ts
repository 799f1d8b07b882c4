/** The release version, printed by `--version` and in the start-up log. */
export const VERSION = "0.1.0";
/**
 * The commit a compiled binary was built from: `deno task compile` writes it here for the
 * build and puts "dev" back afterwards; anything run from source says "dev".
 */
export const COMMIT = "dev";
