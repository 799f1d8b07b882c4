/**
 * `gatehouse grants list|revoke`: operators list and revoke grants (what a person let a client
 * do) on the configured storage, while the gateway runs on it. A revocation made here reaches
 * every running replica within its revocation poll (src/oauth/revocations.ts), which ends the
 * grant's access tokens and its open MCP sessions there. main.ts hands in what touches the
 * outside world: the configuration loader, the storage, the clock and the output.
 */
import type { ResolvedConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import { ClientDirectory } from "../oauth/client_directory.ts";
import { GrantAdmin, type GrantSelector } from "../oauth/grant_admin.ts";
import { GrantStore } from "../oauth/grants.ts";
import type { Store } from "../store/store.ts";
import { onStorage, type OperatorCommandDeps, splitFlag } from "./operator_command.ts";
import { grantsJson, grantsTable } from "./grants_format.ts";

export const GRANTS_USAGE = `Usage:
  gatehouse grants list [--user EMAIL|USER_ID] [--client CLIENT_ID] [--json] [--config PATH]
      the live grants: who let which client use which servers, when, and when it
      last got tokens; all of them, or one person's, or one client's
  gatehouse grants revoke (--user EMAIL|USER_ID | --client CLIENT_ID | --grant GRANT_ID)
                          [--json] [--config PATH]
      revoke them: refresh tokens stop at once, access tokens and open MCP sessions
      on every running gateway within 10 seconds

The storage is the one the configuration names (PATH, else $GATEHOUSE_CONFIG, else
./config.yaml); run it where the gateway runs, as the user it runs as. --user takes an
e-mail address (any case) or the user id a list shows. --json prints a JSON array.

Exit codes: 0 ok (also when nothing matched: there was nothing left to revoke),
64 bad command line, 78 invalid configuration or no oauth: section, 3 storage unusable.`;

export const GRANTS_EXIT = { ok: 0, usage: 64, invalidConfig: 78, runtime: 3 } as const;

/** What main.ts hands the command. */
export type GrantsCommandDeps = OperatorCommandDeps;

interface GrantsCommand {
  action: "list" | "revoke" | "help";
  selector?: GrantSelector;
  json: boolean;
  configPath: string;
}

/** Parses what follows `grants`; a string is the complaint for a bad command line. */
export function parseGrantsArgs(args: string[], defaultConfigPath: string): GrantsCommand | string {
  const command: GrantsCommand = { action: "help", json: false, configPath: defaultConfigPath };
  const selectors: GrantSelector[] = [];
  const [action, ...rest] = args;
  if (action === undefined || action === "--help" || action === "-h") return command;
  if (action !== "list" && action !== "revoke") {
    return `unknown grants command "${action}"; use list or revoke`;
  }
  command.action = action;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const [flag, inline] = splitFlag(arg);
    const value = () => inline ?? rest[++i];
    if (flag === "--help" || flag === "-h") return { ...command, action: "help" };
    if (flag === "--json") {
      command.json = true;
      continue;
    }
    if (!["--user", "--client", "--grant", "--config", "-c"].includes(flag)) {
      return `unknown argument "${arg}"`;
    }
    const given = value();
    if (!given || given.startsWith("--")) return `${flag} needs a value`;
    if (flag === "--config" || flag === "-c") command.configPath = given;
    else if (flag === "--user") {
      // User ids carry their provider ("oidc:…", "github:…"); an address has no colon.
      selectors.push(isAddress(given) ? { email: given } : { user: given });
    } else if (flag === "--client") selectors.push({ client: given });
    else if (action === "list") return "--grant is for revoke; list shows every grant's id";
    else selectors.push({ grant: given });
  }
  if (selectors.length > 1) return "name one of --user, --client or --grant";
  if (action === "revoke" && selectors.length === 0) {
    return "revoke needs --user, --client or --grant (list shows them)";
  }
  command.selector = selectors[0] ?? { all: true };
  return command;
}

/** Runs `gatehouse grants …`; returns the exit code. */
export async function runGrantsCommand(args: string[], deps: GrantsCommandDeps): Promise<number> {
  const command = parseGrantsArgs(args, deps.defaultConfigPath);
  if (typeof command === "string") {
    deps.err(`gatehouse grants: ${command}\n\n${GRANTS_USAGE}`);
    return GRANTS_EXIT.usage;
  }
  if (command.action === "help") {
    deps.out(GRANTS_USAGE);
    return GRANTS_EXIT.ok;
  }
  const config = await deps.loadConfig(command.configPath);
  if (!config) return GRANTS_EXIT.invalidConfig;
  if (!config.oauth) {
    deps.err(
      `gatehouse grants: ${command.configPath} has no oauth: section, so this gateway issues no grants; pass the gateway's configuration with --config`,
    );
    return GRANTS_EXIT.invalidConfig;
  }
  return await onStorage("grants", config, deps, async (store) => {
    const admin = grantAdmin(config, store, deps.clock);
    await admin.indexLegacyGrants();
    const selector = command.selector!;
    const grants = command.action === "list"
      ? await admin.list(selector)
      : await admin.revoke(selector);
    if (command.json) deps.out(grantsJson(grants, config.baseUrl));
    else if (grants.length) deps.out(grantsTable(grants, config.baseUrl));
    if (command.action === "revoke") {
      deps.err(
        grants.length
          ? `revoked ${grants.length} grant${
            grants.length === 1 ? "" : "s"
          }: refresh tokens stop now; access tokens and open sessions on every running gateway within 10 seconds`
          : `nothing to revoke: no live grant matches ${
            describeSelector(selector)
          } (gatehouse grants list shows them)`,
      );
    } else if (!grants.length && !command.json) {
      deps.err(`no live grants${"all" in selector ? "" : ` for ${describeSelector(selector)}`}`);
    }
    return GRANTS_EXIT.ok;
  });
}

function grantAdmin(config: ResolvedConfig, store: Store, clock: Clock): GrantAdmin {
  const oauth = config.oauth!;
  const grants = new GrantStore(store, clock, {
    codeMs: oauth.authorizationCodeTtlMs,
    refreshMs: oauth.refreshTokenTtlMs,
    accessMs: oauth.accessTokenTtlMs,
  });
  // Without a fetcher: a client known by its metadata document is listed by its URL.
  const clients = new ClientDirectory({
    store,
    clock,
    unusedClientTtlMs: oauth.unusedClientTtlMs,
    redirectSchemes: oauth.redirectSchemes,
  });
  return new GrantAdmin({ store, clock, grants, clients });
}

function describeSelector(selector: GrantSelector): string {
  if ("email" in selector) return `--user ${selector.email}`;
  if ("user" in selector) return `--user ${selector.user}`;
  if ("client" in selector) return `--client ${selector.client}`;
  if ("grant" in selector) return `--grant ${selector.grant}`;
  return "any grant";
}

function isAddress(text: string): boolean {
  return text.includes("@") && !text.includes(":");
}
