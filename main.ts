/**
 * Gatehouse command line: `serve` (default, src/serve.ts), `check`, `health`, `schema`, `grants`
 * and `tools` (in src/cli/), `--version`, `--help`.
 *
 * Exit codes: 0 success; 78 invalid configuration; 64 bad command line; 3 failed to start or
 * run (storage unavailable, address in use); 1 an unexpected error.
 */
import { loadConfigFile } from "./src/config/load.ts";
import { ConfigError, formatIssues } from "./src/config/issues.ts";
import type { ResolvedConfig } from "./src/config/types.ts";
import { systemClock } from "./src/core/clock.ts";
import { batchedLineWriter, writeStderr } from "./src/observability/line_writer.ts";
import { openStorage } from "./src/store/open.ts";
import { isPostgresUrl } from "./src/core/storage_url.ts";
import { checkTlsFiles } from "./src/net/tls/certificate.ts";
import { probeHealthTls } from "./src/net/tls/health_probe.ts";
import { COMMIT, VERSION } from "./src/version.ts";
import { CONFIG_SCHEMA } from "./src/config/schema.ts";
import { EXIT, parseArgs, USAGE } from "./src/cli/arguments.ts";
import {
  acceptedLine,
  connectionLines,
  idJagLines,
  toolChangesLines,
} from "./src/cli/check_summary.ts";
import { openFileLimit } from "./src/net/descriptors.ts";
import { runGrantsCommand } from "./src/cli/grants.ts";
import { runToolsCommand } from "./src/cli/tools.ts";
import { runStorageCommand } from "./src/cli/storage_copy.ts";
import { runApprovalsCommand } from "./src/cli/approvals.ts";
import { runKeysCommand } from "./src/cli/keys.ts";
import { serve } from "./src/serve.ts";

export { EXIT };

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

async function load(path: string, port?: number): Promise<ResolvedConfig | undefined> {
  try {
    return await loadConfigFile(path, env, { port });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return undefined;
    }
    throw error;
  }
}

/** Every log line of `serve` goes through here, a turn's lines in one write. */
const logLines = batchedLineWriter(writeStderr);
globalThis.addEventListener("unload", () => logLines.flush());

/** For container health checks and scripts: 0 when GET `url` answers 200 within 5 s. */
async function checkHealth(url: string): Promise<number> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    await response.body?.cancel();
    if (response.ok) return EXIT.ok;
    console.error(`gatehouse: ${url} answered ${response.status}`);
  } catch (error) {
    console.error(`gatehouse: ${url} did not answer: ${(error as Error).message}`);
  }
  return EXIT.runtime;
}

/** The storage `grants` and `tools` work on: the gateway's own, never a new empty one by mistake. */
async function openConfiguredStore(config: ResolvedConfig) {
  const local = config.storage !== ":memory:" && !/^https?:\/\//.test(config.storage) &&
    !isPostgresUrl(config.storage);
  if (local) {
    try {
      await Deno.stat(config.storage);
    } catch {
      throw new Error(
        "there is no such file; pass the running gateway's configuration with --config, or run the command where its storage is",
      );
    }
  }
  return await openStorage(config.storage, {
    clock: systemClock,
    pool: 2,
    timeoutMs: config.storageOptions.timeoutMs,
    caFile: config.storageOptions.caFile,
    sweep: false,
  });
}

async function main(given: string[]): Promise<number> {
  // `deno task gatehouse -- tools list` passes the `--` on.
  const args = given[0] === "--" ? given.slice(1) : given;
  // The operator commands work on the running gateway's storage beside it.
  if (args[0] === "storage") {
    return await runStorageCommand(args.slice(1), {
      openStore: (storage) =>
        openStorage(storage, { clock: systemClock, pool: 2, sweep: false, holder: "copy" }),
      clock: systemClock,
      out: (line) => console.log(line),
      err: (line) => console.error(line),
    });
  }
  const operator = new Map([
    ["grants", runGrantsCommand],
    ["tools", runToolsCommand],
    ["approvals", runApprovalsCommand],
    ["keys", runKeysCommand],
  ]).get(args[0]);
  if (operator) {
    return await operator(args.slice(1), {
      loadConfig: load,
      openStore: openConfiguredStore,
      clock: systemClock,
      defaultConfigPath: env("GATEHOUSE_CONFIG") ?? "./config.yaml",
      out: (line) => console.log(line),
      err: (line) => console.error(line),
    });
  }
  const command = parseArgs(args, env("GATEHOUSE_CONFIG") ?? "./config.yaml");
  if (typeof command === "string") {
    console.error(`gatehouse: ${command}\n\n${USAGE}`);
    return EXIT.usage;
  }
  if (command.name === "help") {
    console.log(USAGE);
    return EXIT.ok;
  }
  if (command.name === "version") {
    console.log(`gatehouse ${VERSION} (commit ${COMMIT})`);
    return EXIT.ok;
  }
  if (command.name === "schema") {
    console.log(JSON.stringify(CONFIG_SCHEMA, null, 2));
    return EXIT.ok;
  }
  if (command.name === "health" && command.url) return await checkHealth(command.url);
  const config = await load(command.configPath, command.port);
  if (!config) return EXIT.invalidConfig;
  if (command.name === "health") {
    const { hostname, port } = config.listen;
    const host = hostname === "0.0.0.0" ? "127.0.0.1" : hostname === "::" ? "[::1]" : hostname;
    if (!config.tls) return await checkHealth(`http://${host}:${port}/health`);
    const status = await probeHealthTls(
      host.replace(/^\[|\]$/g, ""),
      port,
      new URL(config.baseUrl).hostname,
    )
      .catch((error) =>
        console.error(`gatehouse: https://${host}:${port} did not answer: ${error.message}`)
      );
    if (status === 200) return EXIT.ok;
    if (status) console.error(`gatehouse: https://${host}:${port}/health answered ${status}`);
    return EXIT.runtime;
  }
  if (command.name === "check") {
    if (config.tls) {
      // What serve would refuse at start: unreadable files, a key of another certificate.
      try {
        await checkTlsFiles(config.tls);
      } catch (error) {
        console.error(`${command.configPath}: tls: ${(error as Error).message}`);
        return EXIT.invalidConfig;
      }
    }
    console.log(acceptedLine(command.configPath, config));
    for (const line of toolChangesLines(config)) console.log(line);
    for (const line of idJagLines(config)) console.log(line);
    for (const line of connectionLines(config, openFileLimit())) console.log(line);
    if (config.warnings.length) {
      console.error(formatIssues(config.warnings, command.configPath, "warning"));
    }
    return EXIT.ok;
  }
  return await serve(config, {
    configPath: command.configPath,
    port: command.port,
    logLines,
    env,
  });
}

if (import.meta.main) {
  const code = await main(Deno.args);
  logLines.flush();
  Deno.exit(code);
}
