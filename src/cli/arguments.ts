/**
 * The command line of the `gatehouse` binary: its usage text, its exit codes, and the reading
 * of `serve`, `check`, `health` and `schema` arguments (`grants` and `tools` read their own).
 */
import { VERSION } from "../version.ts";

export const USAGE = `Gatehouse ${VERSION}: an OAuth gateway in front of MCP servers.

Usage:
  gatehouse [serve] [--config PATH] [--port N]   start the gateway (N replaces listen:'s port)
  gatehouse check [--config PATH] [--port N]     validate the configuration and exit
  gatehouse health [--config PATH] [--url URL]
                                      exit 0 if the gateway (at URL, else at the
                                      configuration's listen address) answers /health
  gatehouse schema                    print the configuration's JSON Schema
  gatehouse grants list [--user EMAIL] [--json]
                                      the live grants on the configured storage
  gatehouse grants revoke --user EMAIL | --client ID | --grant ID
                                      revoke them (running gateways: within 10 s);
                                      gatehouse grants --help says more
  gatehouse tools list|diff|approve|refuse SERVER [TOOL]
                                      tools held because their definitions changed
                                      since approved: see, compare, approve or refuse them;
                                      gatehouse tools --help says more
  gatehouse storage copy --from SOURCE --to TARGET
                                      copy every record to an empty storage (a KV
                                      file to PostgreSQL), checked by count
  gatehouse approvals list|approve|deny [ID]
                                      tool calls held for a person's approval
                                      gatehouse approvals --help says more
  gatehouse keys rotate|list          the keys that sign identity assertions to
                                      backends: a new one, the previous kept published
                                      until its assertions expire
  gatehouse --version                 print the version and commit
  gatehouse --help                    print this help

The configuration is PATH, else $GATEHOUSE_CONFIG, else ./config.yaml.

Exit codes: 0 ok, 78 invalid configuration, 64 bad command line, 3 failed to start or run
(1 is an unexpected error).`;

/**
 * The two codes a restart cannot fix are sysexits' EX_CONFIG and EX_USAGE, so that a service
 * manager can refuse to restart on them alone: 1 is what Deno exits with on an uncaught error,
 * which a restart may well fix (a momentary lack of file descriptors, say).
 */
export const EXIT = { ok: 0, invalidConfig: 78, usage: 64, runtime: 3 } as const;

export interface Command {
  name: "serve" | "check" | "health" | "schema" | "version" | "help";
  configPath: string;
  url?: string;
  /** `--port N`: replaces the port of `listen:` (a baseUrl left out follows it). */
  port?: number;
}

const SUBCOMMANDS = ["serve", "check", "health", "schema"] as const;

/**
 * Reads the arguments; a sentence saying what is wrong with them instead when they cannot be
 * read. `configPath` is the configuration's path when no `--config` names one.
 */
export function parseArgs(args: string[], defaultConfigPath: string): Command | string {
  let name: Command["name"] | undefined;
  let url: string | undefined;
  let port: number | undefined;
  let configPath = defaultConfigPath;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    // `deno task dev -- --port 9000` passes the `--` on.
    if (arg === "--") continue;
    if (arg === "--help" || arg === "-h") return { name: "help", configPath };
    if (arg === "--version" || arg === "-V") return { name: "version", configPath };
    if (arg === "--config" || arg === "-c") {
      const value = args[++i];
      if (!value) return "--config needs a path";
      configPath = value;
    } else if (arg.startsWith("--config=")) {
      configPath = arg.slice("--config=".length);
    } else if (arg === "--port" || arg.startsWith("--port=")) {
      const value = arg === "--port" ? args[++i] : arg.slice("--port=".length);
      if (!/^\d{1,5}$/.test(value ?? "") || Number(value) > 65535) {
        return `--port needs a port number from 0 to 65535, got ${value ?? "nothing"}`;
      }
      port = Number(value);
    } else if (arg === "--url" && name === "health") {
      url = args[++i];
      if (!url) return "--url needs a URL";
    } else if ((SUBCOMMANDS as readonly string[]).includes(arg) && !name) {
      name = arg as Command["name"];
    } else {
      return `unknown argument "${arg}"`;
    }
  }
  return { name: name ?? "serve", configPath, url, port };
}
