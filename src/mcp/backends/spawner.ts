/**
 * The only place that starts processes. A child starts from an empty environment plus PATH,
 * HOME and LANG (so ordinary programs work) and what the configuration gives it: the gateway's
 * own secrets never reach a backend.
 */

export interface SpawnSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

const INHERITED_VARIABLES = ["PATH", "HOME", "LANG"];

export function childEnvironment(
  configured: Record<string, string>,
  parentEnv: (name: string) => string | undefined = safeEnvGet,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_VARIABLES) {
    const value = parentEnv(name);
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...configured };
}

function safeEnvGet(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

let live = 0;

/** Backend processes running now (for metrics). */
export function liveChildren(): number {
  return live;
}

export function spawn(spec: SpawnSpec): Deno.ChildProcess {
  const child = new Deno.Command(spec.command, {
    args: spec.args,
    env: childEnvironment(spec.env),
    clearEnv: true,
    cwd: spec.cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  live++;
  child.status.then(() => live--, () => live--);
  return child;
}
