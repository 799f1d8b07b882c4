/**
 * `gatehouse approvals list|approve|deny`: operators on the machine see the held tool calls
 * (`approvals:`) and decide one by its id, on the configured storage beside the running
 * gateway. The waiting call learns the decision by the gateway's poll (within a second), on
 * whichever replica holds it. A decision here is the operator's: it is recorded as such, and
 * bypasses `by:` (whoever can run this can read the storage anyway).
 */
import {
  type ApprovalRecord,
  ApprovalRecords,
  OPERATOR_DECIDER,
} from "../mcp/approvals/approval_records.ts";
import { onStorage, type OperatorCommandDeps, splitFlag } from "./operator_command.ts";
import { printable } from "./terminal_text.ts";

export const APPROVALS_USAGE = `Usage:
  gatehouse approvals list [--all] [--json] [--config PATH]
      the tool calls waiting for approval (--all: decided ones still on record too)
  gatehouse approvals approve ID [--config PATH]
  gatehouse approvals deny ID [--config PATH]
      decide one: the waiting call runs (once, with exactly its arguments) or ends
      with approval_denied, within a second, on whichever gateway holds it

The storage is the one the configuration names (PATH, else $GATEHOUSE_CONFIG, else
./config.yaml); run it where the gateway runs, as the user it runs as.

Exit codes: 0 ok, 1 no such waiting call, 64 bad command line, 78 invalid configuration,
3 storage unusable.`;

const EXIT = { ok: 0, notFound: 1, usage: 64, invalidConfig: 78 } as const;

interface ApprovalsCommand {
  action: "list" | "approve" | "deny" | "help";
  id?: string;
  all: boolean;
  json: boolean;
  configPath: string;
}

export function parseApprovalsArgs(args: string[], configPath: string): ApprovalsCommand | string {
  const command: ApprovalsCommand = { action: "help", all: false, json: false, configPath };
  const [action, ...rest] = args;
  if (action === undefined || action === "--help" || action === "-h") return command;
  if (action !== "list" && action !== "approve" && action !== "deny") {
    return `unknown approvals command "${action}"; use list, approve or deny`;
  }
  command.action = action;
  for (let i = 0; i < rest.length; i++) {
    const [flag, inline] = splitFlag(rest[i]);
    if (flag === "--help" || flag === "-h") return { ...command, action: "help" };
    if (flag === "--json") command.json = true;
    else if (flag === "--all" && action === "list") command.all = true;
    else if (flag === "--config" || flag === "-c") {
      const given = inline ?? rest[++i];
      if (!given || given.startsWith("--")) return `${flag} needs a value`;
      command.configPath = given;
    } else if (!flag.startsWith("-") && action !== "list" && command.id === undefined) {
      command.id = flag;
    } else return `unknown argument "${rest[i]}"`;
  }
  if (action !== "list" && !command.id) {
    return `${action} needs the id of a held call (list shows them)`;
  }
  return command;
}

export async function runApprovalsCommand(
  args: string[],
  deps: OperatorCommandDeps,
): Promise<number> {
  const command = parseApprovalsArgs(args, deps.defaultConfigPath);
  if (typeof command === "string") {
    deps.err(`gatehouse approvals: ${command}\n\n${APPROVALS_USAGE}`);
    return EXIT.usage;
  }
  if (command.action === "help") {
    deps.out(APPROVALS_USAGE);
    return EXIT.ok;
  }
  const config = await deps.loadConfig(command.configPath);
  if (!config) return EXIT.invalidConfig;
  return await onStorage("approvals", config, deps, async (store) => {
    const records = new ApprovalRecords(store, deps.clock);
    if (command.action === "list") {
      const all = await records.all();
      const shown = command.all ? all : all.filter((record) => record.status === "pending");
      if (command.json) deps.out(JSON.stringify(shown.map(asJson), null, 2));
      else if (shown.length) deps.out(table(shown));
      else deps.err(command.all ? "no held calls on record" : "no call waits for approval");
      return EXIT.ok;
    }
    const decided = await records.move(
      command.id!,
      ["pending"],
      command.action === "approve" ? "approved" : "denied",
      { decidedBy: OPERATOR_DECIDER, decidedAt: deps.clock.now() },
    );
    if (!decided) {
      deps.err(
        `gatehouse approvals: no call waits under ${
          printable(command.id!)
        } (decided, used or expired already?); gatehouse approvals list --all shows them`,
      );
      return EXIT.notFound;
    }
    if (command.json) deps.out(JSON.stringify(asJson(decided), null, 2));
    deps.err(
      `${command.action === "approve" ? "approved" : "denied"}: ${printable(decided.tool)} on ${
        printable(decided.server)
      } for ${
        printable(decided.person.email ?? decided.person.id)
      }; the waiting call learns it within a second`,
    );
    return EXIT.ok;
  });
}

function asJson(record: ApprovalRecord) {
  return {
    id: record.id,
    status: record.status,
    server: record.server,
    ...(record.member && { member: record.member }),
    tool: record.tool,
    person: record.person.email ?? record.person.id,
    client: record.client ?? null,
    by: record.by,
    requestedAt: new Date(record.requestedAt).toISOString(),
    expiresAt: new Date(record.expiresAt).toISOString(),
    decidedBy: record.decidedBy ?? null,
  };
}

const COLUMNS = ["ID", "STATUS", "SERVER", "TOOL", "PERSON", "EXPIRES (UTC)"];

function table(records: ApprovalRecord[]): string {
  const rows = records.map((record) => [
    record.id,
    record.status,
    printable(record.server),
    printable(record.tool).slice(0, 48),
    printable(record.person.email ?? record.person.id).slice(0, 48),
    new Date(record.expiresAt).toISOString().slice(0, 16).replace("T", " "),
  ]);
  const widths = COLUMNS.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => row[i].length))
  );
  return [COLUMNS, ...rows].map((row) =>
    row.map((text, i) => text.padEnd(widths[i])).join("  ").trimEnd()
  )
    .join("\n");
}
