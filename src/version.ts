/** The release version, printed by `--version` and in the start-up log. */
export const VERSION = "0.1.0";
