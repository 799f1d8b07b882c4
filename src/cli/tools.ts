/**
 * `gatehouse tools list|diff|approve`: operators see which tools the running gateways hold
 * because their definitions changed (or are new) since they were approved, read what changed,
 * and approve them, on the configured storage while the gateway runs on it (like `grants`).
 * An approval reaches every replica at the next list, and its calls within 2 seconds
 * (src/mcp/tool_integrity.ts). main.ts hands in the configuration loader, the storage, the
 * clock and the output.
 */
import type { ResolvedConfig } from "../config/types.ts";
import { ToolLedger, type ToolRecord } from "../mcp/tools/tool_ledger.ts";
import { onStorage, type OperatorCommandDeps, splitFlag } from "./operator_command.ts";
import { diffText, recordsJson, recordsTable } from "./tools_format.ts";

export const TOOLS_USAGE = `Usage:
  gatehouse tools list [SERVER] [--held] [--json] [--config PATH]
      the tools whose definitions the gateways have seen: approved (how, when) or
      HELD (changed or new since approved, waiting for you), with their digests
  gatehouse tools diff SERVER [TOOL] [--json] [--config PATH]
      what changed in each held tool: field by field against the approved definition
      (--json prints both definitions in full)
  gatehouse tools approve SERVER [TOOL [--digest DIGEST]] [--config PATH]
      approve the held definition of TOOL, or of every held tool of SERVER; the
      gateways serve it again at once (calls within 2 seconds). With --digest (what
      diff showed as seen, or its first 12 characters or more), only that definition:
      if the server changed it again since, nothing is approved

SERVER is the server that defines the tool (for an aggregate's tool, its member server).
The storage is the one the configuration names (PATH, else $GATEHOUSE_CONFIG, else
./config.yaml); run it where the gateway runs, as the user it runs as. The DIGEST column
is what servers.NAME.tools.pinned takes.

Exit codes: 0 ok (also when nothing was held), 64 bad command line, 78 invalid
configuration, 3 storage unusable, 1 nothing held to approve where asked.`;

export const TOOLS_EXIT = { ok: 0, nothing: 1, usage: 64, invalidConfig: 78, runtime: 3 } as const;

/** What main.ts hands the command. */
export type ToolsCommandDeps = OperatorCommandDeps;

interface ToolsCommand {
  action: "list" | "diff" | "approve" | "help";
  server?: string;
  tool?: string;
  held: boolean;
  json: boolean;
  configPath: string;
  /** approve --digest: the held definition reviewed. */
  digest?: string;
}

/** Parses what follows `tools`; a string is the complaint for a bad command line. */
export function parseToolsArgs(args: string[], defaultConfigPath: string): ToolsCommand | string {
  const command: ToolsCommand = {
    action: "help",
    held: false,
    json: false,
    configPath: defaultConfigPath,
  };
  const [action, ...rest] = args;
  if (action === undefined || action === "--help" || action === "-h") return command;
  if (action !== "list" && action !== "diff" && action !== "approve") {
    return `unknown tools command "${action}"; use list, diff or approve`;
  }
  command.action = action;
  const names: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const [flag, inline] = splitFlag(arg);
    if (flag === "--help" || flag === "-h") return { ...command, action: "help" };
    if (flag === "--json" && action !== "approve") command.json = true;
    else if (flag === "--held" && action === "list") command.held = true;
    else if (flag === "--digest" && action === "approve") {
      const given = (inline ?? rest[++i])?.toLowerCase();
      if (!given || !/^[0-9a-f]{12,64}$/.test(given)) {
        return "--digest needs the digest diff showed (at least its first 12 hex characters)";
      }
      command.digest = given;
    } else if (flag === "--config" || flag === "-c") {
      const given = inline ?? rest[++i];
      if (!given || given.startsWith("--")) return `${flag} needs a value`;
      command.configPath = given;
    } else if (arg.startsWith("-")) return `unknown argument "${arg}"`;
    else names.push(arg);
  }
  const most = action === "list" ? 1 : 2;
  if (names.length > most) {
    return `too many names: ${action} takes ${most === 1 ? "SERVER" : "SERVER [TOOL]"}`;
  }
  if (action !== "list" && names.length === 0) {
    return `${action} needs the SERVER (list shows them)`;
  }
  [command.server, command.tool] = names;
  if (command.digest !== undefined && command.tool === undefined) {
    return "--digest names one tool's definition: give the TOOL too";
  }
  return command;
}

/** Runs `gatehouse tools …`; returns the exit code. */
export async function runToolsCommand(args: string[], deps: ToolsCommandDeps): Promise<number> {
  const command = parseToolsArgs(args, deps.defaultConfigPath);
  if (typeof command === "string") {
    deps.err(`gatehouse tools: ${command}\n\n${TOOLS_USAGE}`);
    return TOOLS_EXIT.usage;
  }
  if (command.action === "help") {
    deps.out(TOOLS_USAGE);
    return TOOLS_EXIT.ok;
  }
  const config = await deps.loadConfig(command.configPath);
  if (!config) return TOOLS_EXIT.invalidConfig;
  const problem = command.server && serverProblem(config, command.server);
  if (problem) {
    deps.err(`gatehouse tools: ${problem}`);
    return TOOLS_EXIT.usage;
  }
  return await onStorage("tools", config, deps, async (store) => {
    const ledger = new ToolLedger(store, deps.clock);
    if (command.action === "approve") return await approve(ledger, command, deps);
    let records = await ledger.records(command.server);
    if (command.tool !== undefined) records = records.filter((r) => r.tool === command.tool);
    if (command.held || command.action === "diff") records = records.filter((r) => r.held);
    if (command.json) deps.out(recordsJson(records, command.action === "diff"));
    else if (records.length === 0) deps.err(nothingText(command));
    else if (command.action === "list") deps.out(recordsTable(records));
    else deps.out(records.map(diffText).join("\n\n"));
    return TOOLS_EXIT.ok;
  });
}

async function approve(ledger: ToolLedger, command: ToolsCommand, deps: ToolsCommandDeps) {
  const approved: ToolRecord[] = await ledger.approve(
    command.server!,
    command.tool,
    command.digest,
  );
  if (approved.length === 0) {
    const now = command.digest && (await ledger.record(command.server!, command.tool!))?.held;
    deps.err(
      now
        ? `nothing approved: the held definition of ${command.server} ${command.tool} is now ${now.digest}, not the ${command.digest} you reviewed (the server changed it again); run gatehouse tools diff ${command.server} ${command.tool} again`
        : nothingText(command),
    );
    return TOOLS_EXIT.nothing;
  }
  for (const record of approved) {
    deps.out(`approved ${record.server} ${record.tool} (digest ${record.approved!.digest})`);
  }
  deps.err(
    `approved ${approved.length} tool definition${approved.length === 1 ? "" : "s"}: ` +
      "the gateways list them at once and serve their calls within 2 seconds",
  );
  return TOOLS_EXIT.ok;
}

function nothingText(command: ToolsCommand): string {
  const where = command.server
    ? ` for ${command.server}${command.tool ? ` ${command.tool}` : ""}`
    : "";
  if (command.action === "list" && !command.held) {
    return `no tool definitions recorded${where} yet (they are recorded when a client lists tools)`;
  }
  return `nothing held${where} (gatehouse tools list shows every tool's state)`;
}

/** Why `server` cannot be named here; undefined when it can. */
function serverProblem(config: ResolvedConfig, server: string): string | undefined {
  const found = config.servers.get(server as never);
  if (!found) {
    return `no server "${server}" in the configuration (servers: ${
      [...config.servers.keys()].join(", ")
    })`;
  }
  if (found.transport === "aggregate") {
    return `"${server}" is an aggregate: its tools belong to its members; name the member (${
      found.members.join(", ")
    }) and the tool without the member's prefix`;
  }
  return undefined;
}
