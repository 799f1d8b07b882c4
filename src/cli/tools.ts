/**
 * `gatehouse tools list|diff|approve|refuse`: operators see which tools the running gateways
 * hold because their definitions changed (or are new) since they were approved, read what
 * changed, and approve or refuse them (refuse is the console's Refuse: ToolLedger.refuse), on the
 * configured storage while the gateway runs on it (like `grants`).
 * An approval reaches every replica at the next list, and its calls within 2 seconds
 * (src/mcp/tool_integrity.ts). main.ts hands in the configuration loader, the storage, the
 * clock and the output.
 */
import type { ResolvedConfig } from "../config/types.ts";
import { ToolLedger, type ToolRecord } from "../mcp/tools/tool_ledger.ts";
import { onStorage, type OperatorCommandDeps, splitFlag } from "./operator_command.ts";
import {
  approveAllText,
  diffText,
  recordsJson,
  recordsTable,
  reviewDigest,
} from "./tools_format.ts";

export const TOOLS_USAGE = `Usage:
  gatehouse tools list [SERVER] [--held] [--new] [--json] [--config PATH]
      the tools whose definitions the gateways have seen: approved (how, when) or
      HELD (changed or new since approved, waiting for you), with their digests
  gatehouse tools diff SERVER [TOOL] [--new] [--json] [--config PATH]
      what changed in each held tool: field by field against the approved definition
      (--json prints both definitions in full); for a whole SERVER, ends with the one
      command that approves exactly what it showed
  gatehouse tools approve SERVER [TOOL] [--new] [--digest DIGEST] [--config PATH]
      approve the held definition of TOOL, or of every held tool of SERVER; the
      gateways serve it again at once (calls within 2 seconds). With --digest (what
      diff showed, or its first 12 characters or more), only what you reviewed: one
      TOOL's definition, or for a whole SERVER the set of held definitions diff
      showed; if the server changed any of it since, nothing is approved
  gatehouse tools refuse SERVER TOOL [--digest DIGEST] [--config PATH]
      refuse the held definition of TOOL (the console's Refuse): it stays out of
      every list, marked refused, until a new definition is approved. With --digest,
      only the definition you reviewed; if the server changed it since, nothing is
      refused

--new: only tools new since the server was first seen (none approved yet), such as the
tools a server lists only to clients that can answer sampling or elicitation.

SERVER is the server that defines the tool (for an aggregate's tool, its member server).
The storage is the one the configuration names (PATH, else $GATEHOUSE_CONFIG, else
./config.yaml); run it where the gateway runs, as the user it runs as. The DIGEST column
is what servers.NAME.tools.pinned takes.

Exit codes: 0 ok (also when nothing was held), 64 bad command line, 78 invalid
configuration, 3 storage unusable, 1 nothing held to approve (or refuse) where asked.`;

export const TOOLS_EXIT = { ok: 0, nothing: 1, usage: 64, invalidConfig: 78, runtime: 3 } as const;

/** What main.ts hands the command. */
export type ToolsCommandDeps = OperatorCommandDeps;

interface ToolsCommand {
  action: "list" | "diff" | "approve" | "refuse" | "help";
  server?: string;
  tool?: string;
  held: boolean;
  json: boolean;
  configPath: string;
  /**
   * approve/refuse --digest: the held definition reviewed (of TOOL), or for approve the held
   * set (of SERVER).
   */
  digest?: string;
  /** --new: only held tools with no approved definition. */
  newOnly: boolean;
}

/** Parses what follows `tools`; a string is the complaint for a bad command line. */
export function parseToolsArgs(args: string[], defaultConfigPath: string): ToolsCommand | string {
  const command: ToolsCommand = {
    action: "help",
    held: false,
    json: false,
    newOnly: false,
    configPath: defaultConfigPath,
  };
  const [action, ...rest] = args;
  if (action === undefined || action === "--help" || action === "-h") return command;
  if (action !== "list" && action !== "diff" && action !== "approve" && action !== "refuse") {
    return `unknown tools command "${action}"; use list, diff, approve or refuse`;
  }
  command.action = action;
  const names: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const [flag, inline] = splitFlag(arg);
    if (flag === "--help" || flag === "-h") return { ...command, action: "help" };
    if (flag === "--json" && action !== "approve" && action !== "refuse") command.json = true;
    else if (flag === "--held" && action === "list") command.held = true;
    else if (flag === "--new" && action !== "refuse") command.newOnly = true;
    else if (flag === "--digest" && (action === "approve" || action === "refuse")) {
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
  if (action === "refuse" && names.length < 2) return "refuse needs the SERVER and the TOOL";
  [command.server, command.tool] = names;
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
    const ledger = new ToolLedger(store, deps.clock, config.limits.heldToolRetentionMs);
    if (command.action === "approve") return await approve(ledger, command, deps);
    if (command.action === "refuse") return await refuse(ledger, command, deps);
    let records = await ledger.records(command.server);
    if (command.tool !== undefined) records = records.filter((r) => r.tool === command.tool);
    if (command.held || command.action === "diff") records = records.filter((r) => r.held);
    if (command.newOnly) records = records.filter(isNew);
    if (command.json) deps.out(recordsJson(records, command.action === "diff"));
    else if (records.length === 0) deps.err(nothingText(command));
    else if (command.action === "list") deps.out(recordsTable(records));
    else {
      deps.out(records.map(diffText).join("\n\n"));
      if (command.tool === undefined) {
        deps.out(`\n${approveAllText(command.server!, records, command.newOnly)}`);
      }
    }
    return TOOLS_EXIT.ok;
  });
}

async function approve(ledger: ToolLedger, command: ToolsCommand, deps: ToolsCommandDeps) {
  const server = command.server!;
  const whole = command.tool === undefined && (command.digest !== undefined || command.newOnly);
  const approved: ToolRecord[] = whole
    ? await approveSet(ledger, command, deps)
    : await ledger.approve(server, command.tool, command.digest);
  if (approved.length === 0) {
    const now = command.digest && command.tool &&
      (await ledger.record(server, command.tool))?.held;
    if (now) {
      deps.err(
        `nothing approved: the held definition of ${server} ${command.tool} is now ${now.digest}, not the ${command.digest} you reviewed (the server changed it again); run gatehouse tools diff ${server} ${command.tool} again`,
      );
    } else if (!whole || command.digest === undefined) deps.err(nothingText(command));
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

/** Who refused, as the record and `tools list` show it (the console records the admin's address). */
export const OPERATOR_REFUSER = "operator (gatehouse tools refuse)";

/** The held definition of one tool refused, as the console's Refuse does (ToolLedger.refuse). */
async function refuse(ledger: ToolLedger, command: ToolsCommand, deps: ToolsCommandDeps) {
  const server = command.server!;
  const tool = command.tool!;
  const held = (await ledger.record(server, tool))?.held;
  if (!held) {
    deps.err(nothingText(command));
    return TOOLS_EXIT.nothing;
  }
  const changed = () =>
    deps.err(
      `nothing refused: the held definition of ${server} ${tool} is now ${held.digest}, not the ${command.digest} you reviewed (the server changed it again); run gatehouse tools diff ${server} ${tool} again`,
    );
  if (command.digest !== undefined && !held.digest.startsWith(command.digest)) {
    changed();
    return TOOLS_EXIT.nothing;
  }
  if (!(await ledger.refuse(server, tool, held.digest, OPERATOR_REFUSER))) {
    deps.err(
      `nothing refused: the held definition of ${server} ${tool} changed while refusing it; run gatehouse tools diff ${server} ${tool} again`,
    );
    return TOOLS_EXIT.nothing;
  }
  deps.out(`refused ${server} ${tool} (digest ${held.digest})`);
  deps.err(
    "refused: the tool stays out of every list until a new definition is approved " +
      `(gatehouse tools approve ${server} ${tool} when it is)`,
  );
  return TOOLS_EXIT.ok;
}

/**
 * A whole server's held definitions (with --new, only its new tools), approved as a set: with
 * --digest only if they are still the set diff showed, each one only while still held as shown.
 */
async function approveSet(
  ledger: ToolLedger,
  command: ToolsCommand,
  deps: ToolsCommandDeps,
): Promise<ToolRecord[]> {
  const server = command.server!;
  let held = (await ledger.records(server)).filter((record) => record.held);
  if (command.newOnly) held = held.filter(isNew);
  if (command.digest !== undefined && held.length > 0) {
    const now = reviewDigest(held);
    if (!now.startsWith(command.digest)) {
      deps.err(
        `nothing approved: the held ${
          command.newOnly ? "new tools" : "definitions"
        } of ${server} are now the set ${now}, not the ${command.digest} you reviewed (the server changed or added some since); run gatehouse tools diff ${server}${
          command.newOnly ? " --new" : ""
        } again`,
      );
      return [];
    }
  } else if (command.digest !== undefined) deps.err(nothingText(command));
  const reviewed = new Map(held.map((record) => [record.tool, record.held!.digest]));
  return await ledger.approveReviewed(server, reviewed);
}

/** A held tool that was never approved: new since the server was first seen. */
function isNew(record: ToolRecord): boolean {
  return record.held !== undefined && record.approved === undefined;
}

function nothingText(command: ToolsCommand): string {
  const where = command.server
    ? ` for ${command.server}${command.tool ? ` ${command.tool}` : ""}`
    : "";
  if (command.action === "list" && !command.held) {
    return `no tool definitions recorded${where} yet (they are recorded when a client lists tools)`;
  }
  const what = command.newOnly ? "no new tool held" : "nothing held";
  return `${what}${where} (gatehouse tools list shows every tool's state)`;
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
