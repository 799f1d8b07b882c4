/** Starting, watching and measuring the bench's processes (all on 127.0.0.1). */

const TICKS_PER_SECOND = 100; // Linux USER_HZ

export interface Running {
  pid: number;
  /** Everything the process printed so far. */
  output(): string;
  /** Resolves when the process ends. */
  exited: Promise<Deno.CommandStatus>;
  stop(): Promise<void>;
}

/** Spawns `deno <args>` and waits (bounded) until its output matches `ready`, if given. */
export async function startDeno(
  args: string[],
  ready: RegExp = /(?:)/,
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<Running> {
  const child = new Deno.Command("deno", {
    args,
    env: options.env,
    cwd: options.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const decoder = new TextDecoder();
  let seen = "";
  const drained = Promise.all([child.stdout, child.stderr].map(async (stream) => {
    for await (const chunk of stream) {
      // Keep the head (start-up lines) and a tail; a chatty process must not grow the bench.
      seen = seen.length > 1_000_000 ? seen.slice(0, 100_000) : seen;
      seen += decoder.decode(chunk, { stream: true });
    }
  }));
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (!ready.test(seen) && Date.now() < deadline) await sleep(5);
  const stop = async () => {
    await terminate(child);
    await drained;
  };
  if (!ready.test(seen)) {
    await stop();
    throw new Error(`did not start within its time: deno ${args.join(" ")}\n${seen.slice(-2000)}`);
  }
  return { pid: child.pid, output: () => seen, exited: child.status, stop };
}

/**
 * Starts a server script that prints `listening on <port>` (the bench's backends, the SDK
 * fixture) and returns it with the URL of `path` on it.
 */
export async function startListening(
  args: string[],
  path: string,
): Promise<Running & { url: string }> {
  const running = await startDeno(["run", ...args], /listening on \d+/);
  const port = /listening on (\d+)/.exec(running.output())![1];
  return { ...running, url: `http://127.0.0.1:${port}${path}` };
}

/** How long a process may take to end before it is killed. */
const END_GRACE_MS = 5_000;

/**
 * Waits for `child` to end, killing it once `END_GRACE_MS` have passed; sends `signal` first
 * (null for a process told to end some other way, by its stdin closing).
 */
export async function terminate(
  child: Deno.ChildProcess,
  signal: Deno.Signal | null = "SIGTERM",
): Promise<void> {
  if (signal) {
    try {
      child.kill(signal);
    } catch { /* gone already */ }
  }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, END_GRACE_MS);
  await child.status;
  clearTimeout(timer);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** CPU time (user + system) the process has used, in microseconds, from /proc. */
export function cpuMicros(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).replace(/^.*\) /, "").split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND * 1e6;
}

/**
 * CPU time on the processor of all the process's live threads, in microseconds, from each
 * thread's /proc schedstat (nanoseconds). Finer than `cpuMicros`, whose ticks are 10 ms: a
 * proxy spending 12 µs a call spends one tick in 800 calls. A thread that ends takes its time
 * with it, so `cpuSpent` checks this against the ticks. Undefined where schedstat is missing.
 */
export function cpuMicrosFine(pid: number): number | undefined {
  let nanos = 0;
  try {
    for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
      try {
        nanos += Number(
          Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/schedstat`).split(" ")[0],
        );
      } catch { /* the thread ended meanwhile */ }
    }
  } catch {
    return undefined;
  }
  return nanos / 1000;
}

/** A reading of a process's CPU clocks, for `cpuSpent`. */
export interface CpuReading {
  ticks: number;
  fine?: number;
}

export function readCpu(pid: number): CpuReading {
  return { ticks: cpuMicros(pid), fine: cpuMicrosFine(pid) };
}

/**
 * CPU µs spent between two readings: the per-thread figure when it agrees with the ticks
 * (each reading of those is up to one tick short), the ticks otherwise (a thread ended and
 * took its time along).
 */
export function cpuSpent(before: CpuReading, after: CpuReading): number {
  const ticks = after.ticks - before.ticks;
  if (before.fine === undefined || after.fine === undefined) return ticks;
  const fine = after.fine - before.fine;
  const tick = 1e6 / TICKS_PER_SECOND;
  return Math.abs(fine - ticks) <= tick * 1.05 ? fine : ticks;
}

/** The ids of a process's children (Linux 3.5+: /proc/<pid>/task/<pid>/children). */
export function childPids(pid: number): number[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/)
      .filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Resident set size in bytes, from /proc. */
export function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return Number(match?.[1] ?? 0) * 1024;
}

export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Polls `url` until it answers 2xx (bounded); returns the milliseconds it took. */
export async function waitForOk(
  url: string,
  timeoutMs = 30_000,
  everyMs = 50,
  client?: Deno.HttpClient,
): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    try {
      const response = await fetch(url, client ? { client } : {});
      await response.body?.cancel();
      if (response.ok) return performance.now() - started;
    } catch { /* not listening yet */ }
    await sleep(everyMs);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** The CPU model and core count, for the report. */
export function machine(): { cpu: string; cores: number; os: string; memoryGiB: number } {
  const cpuinfo = Deno.readTextFileSync("/proc/cpuinfo");
  const cpu = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? "unknown";
  return {
    cpu,
    cores: navigator.hardwareConcurrency,
    os: `${Deno.build.os} ${Deno.osRelease()}`,
    memoryGiB: Math.round(Deno.systemMemoryInfo().total / 2 ** 30),
  };
}
