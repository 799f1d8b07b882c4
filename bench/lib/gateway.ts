/**
 * Starts Gatehouse as users run it (`deno run <the binary's permissions> main.ts serve`) on a
 * configuration the scenario writes, and the company-login pieces when a scenario wants
 * OAuth JWTs: a real OIDC provider and the whole sign-in, so the token is one the gateway
 * issued through its normal flow.
 */
import { RUNTIME_PERMISSIONS } from "../../scripts/compile.ts";
import { type IdpOptions, startIdp, type TestIdp } from "../../tests/fixtures/idp.ts";
import { exchangeCode, obtainCode, registerClient } from "../../tests/fixtures/oauth_raw.ts";
import { UserAgent } from "../../tests/fixtures/user_agent.ts";
import { freePort, type Running, startDeno, startListening, waitForOk } from "./processes.ts";
import { DENO_DIR_YAML } from "../../tests/fixtures/deno_dir.ts";

export const ROOT = new URL("../../", import.meta.url).pathname;
export const MASTER_SECRET = "bench-master-secret-0123456789-abcdefghijklmnop";
export const BENCH_TOKEN = "bench-static-token-0123456789abcdef";

/** Settings every bench gateway shares: one load generator stands for many people. */
export function baseConfig(port: number, storage = ":memory:"): string {
  return `listen: 127.0.0.1:${port}
baseUrl: http://127.0.0.1:${port}
storage: "${storage}"
secret: ${MASTER_SECRET}
limits: { sessionsPerUser: 100000, maxSessions: 100000, requestTimeout: 30s, sessionIdleTimeout: 1h }
rateLimits: { mcpPerUser: 100000000/s, mcpPerClient: 100000000/s }
`;
}

export interface BenchGateway extends Running {
  url: string;
  idp?: TestIdp;
  /** An access token for one server, obtained through the real sign-in (OAuth gateways only). */
  accessToken(server: string): Promise<string>;
}

/** `servers` is the YAML of the `servers:` mapping's entries (indented by two). */
export async function startGateway(
  servers: string,
  options: {
    oauth?: boolean;
    /** The test IdP's options (refresh tokens, a token exchange), with `oauth`. */
    idp?: IdpOptions;
    extra?: string;
    env?: Record<string, string>;
    /** More `deno run` flags (the memory scenario's `--inspect`). */
    flags?: string[];
    /** The gateway serves https (`extra` holds its tls:); its URL is https://localhost:PORT. */
    https?: { caCert: string };
    /** `storage:` (in memory when left out). */
    storage?: string;
  } = {},
): Promise<BenchGateway> {
  const port = freePort();
  const url = options.https ? `https://localhost:${port}` : `http://127.0.0.1:${port}`;
  const idp = options.oauth ? await startIdp([`${url}/oauth/callback`], options.idp) : undefined;
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-" });
  const oauth = idp
    ? `oauth:
  accessTokenTtl: 1h
  idp:
    provider: oidc
    issuer: ${idp.issuer}
    clientId: ${idp.clientId}
    clientSecret: ${idp.clientSecret}
  allow:
    domains: [example.com]
`
    : "";
  await Deno.writeTextFile(
    `${dir}/config.yaml`,
    `${baseConfig(port, options.storage)}${options.extra ?? ""}${oauth}servers:\n${servers}`,
  );
  // GATEHOUSE_BENCH_CPU_PROF=DIR: the gateway writes a V8 CPU profile there when it exits.
  const profileDir = Deno.env.get("GATEHOUSE_BENCH_CPU_PROF");
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const running = await startDeno(
    [
      "run",
      ...profile,
      ...options.flags ?? [],
      ...RUNTIME_PERMISSIONS,
      `${ROOT}main.ts`,
      "serve",
      "--config",
      `${dir}/config.yaml`,
    ],
    undefined,
    { env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "", ...options.env } },
  ).catch(async (error) => {
    await idp?.close();
    throw error;
  });
  const trusting = options.https && Deno.createHttpClient({ caCerts: [options.https.caCert] });
  const healthy = await Promise.race([
    waitForOk(`${url}/health`, undefined, undefined, trusting || undefined).then(() => true),
    running.exited.then(() => false),
  ]);
  if (trusting) trusting.close();
  if (!healthy) {
    await idp?.close();
    throw new Error(`the gateway exited at start:\n${running.output().slice(-3000)}`);
  }
  let client: { client_id: string } | undefined;
  return {
    ...running,
    url,
    idp,
    async accessToken(server) {
      client ??= await registerClient(url);
      const code = (await obtainCode(new UserAgent(), url, client.client_id, `${url}/${server}`))
        .get("code");
      if (!code) throw new Error(`the sign-in for ${server} gave no code`);
      const issued = await exchangeCode(url, client.client_id, code);
      if (!issued.json.access_token) throw new Error(`token: ${JSON.stringify(issued.json)}`);
      return issued.json.access_token;
    },
    async stop() {
      await running.stop();
      await idp?.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A stdio server entry running a fixture with plain `deno run`. */
export function stdioServer(name: string, script: string, args: string[] = [], extra = ""): string {
  const quoted = [script, ...args].map((a) => JSON.stringify(a)).join(", ");
  return `  ${name}:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, ${quoted}]
${extra}`;
}

/** The `servers:` entries most scenarios use: `http` at an HTTP backend, `stdio` the minimal one. */
export function httpAndStdioServers(backendUrl: string): string {
  return `  http:
    transport: streamable-http
    url: ${backendUrl}
    public: true
${stdioServer("stdio", `${ROOT}tests/fixtures/minimal_server.ts`, [], "    public: true\n")}`;
}

/**
 * The minimal Streamable HTTP backend (bench/backends/minimal_http.ts) answering in JSON, with
 * the permissions to read the run's environment and files.
 */
export function startMinimalBackend(): Promise<Running & { url: string }> {
  return startListening(
    [
      "--allow-net",
      "--allow-env",
      "--allow-read",
      `${ROOT}bench/backends/minimal_http.ts`,
      "0",
      "json",
    ],
    "/mcp",
  );
}
