/**
 * Real nginx, the one launcher for the bench and the tests: the proxy an operator already runs,
 * configured the way one would put it in front of an MCP server or the gateway (one worker,
 * kept-alive connections to the upstream), run as the current user from a temp directory with
 * its own configuration, pid file, logs and temp paths. The bench's anchor (issue 20) uses it
 * only when `nginx` is installed (Debian: `nginx-light`); tests/fixtures/nginx_proxy.ts puts it
 * in front of a gateway the way docs/deploy.md shows.
 */
import { childPids, freePort, type Running, sleep, terminate } from "./processes.ts";

/** Where Debian puts it; not on a normal user's PATH. */
const SBIN = ["/usr/sbin/nginx", "/usr/local/sbin/nginx"];

/** The nginx binary on the PATH (or in an sbin directory), or undefined. */
export function findNginx(): string | undefined {
  const dirs = (Deno.env.get("PATH") ?? "").split(":").filter(Boolean);
  for (const candidate of [...dirs.map((d) => `${d}/nginx`), ...SBIN]) {
    try {
      if (Deno.statSync(candidate).isFile) return candidate;
    } catch { /* not here */ }
  }
  return undefined;
}

export interface Upstream {
  /** The first path segment clients use: `/<name>/…` goes to the upstream's `/…`. */
  name: string;
  /** host:port of the upstream. */
  address: string;
  /** SSE answers: pass each byte on as it comes, as an MCP proxy must (`proxy_buffering off`). */
  streaming?: boolean;
  /**
   * In front of a gateway, as docs/deploy.md shows: served at `/` with paths unchanged, the
   * client's `Host` kept and the client named in `X-Forwarded-For` and `X-Forwarded-Proto`.
   */
  gateway?: boolean;
}

export interface BenchNginx extends Running {
  /** http://127.0.0.1:port */
  url: string;
  masterPid: number;
  workerPid: number;
}

const FORWARDED = `      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
`;

function config(dir: string, port: number, upstreams: Upstream[]): string {
  // As root, the worker would become `nobody` and could not reach the temp directory.
  const user = Deno.uid() === 0 ? "user root root;\n" : "";
  return `daemon off;
master_process on;
worker_processes 1;
${user}pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  # The load generator keeps each connection for the whole run (nginx closes after 1,000).
  keepalive_requests 10000000;
  # Bodies of the 64 KiB case stay in memory, as the gateway keeps them (the defaults would
  # write such a request body and answer to temp files).
  client_body_buffer_size 256k;
  proxy_buffer_size 16k;
  proxy_buffers 16 16k;
  proxy_busy_buffers_size 32k;
${
    upstreams.map((u) =>
      `  upstream ${u.name} { server ${u.address}; keepalive 32; keepalive_requests 10000000; }\n`
    ).join("")
  }  server {
    listen 127.0.0.1:${port};
${
    upstreams.map((u) =>
      `    location ${u.gateway ? "/" : `/${u.name}/`} {
      proxy_pass http://${u.name}${u.gateway ? "" : "/"};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
${u.gateway ? FORWARDED : ""}${u.streaming ? "      proxy_buffering off;\n" : ""}    }
`
    ).join("")
  }  }
}
`;
}

/** Starts nginx in the foreground (bounded wait) and finds its one worker. */
export async function startNginx(binary: string, upstreams: Upstream[]): Promise<BenchNginx> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-nginx-" });
  const port = freePort();
  await Deno.writeTextFile(`${dir}/nginx.conf`, config(dir, port, upstreams));
  const child = new Deno.Command(binary, {
    // -e: the log nginx writes before it reads the configuration (default /var/log/nginx).
    args: ["-p", `${dir}/`, "-c", `${dir}/nginx.conf`, "-e", `${dir}/error.log`],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const drained = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
  })();
  const output = () => {
    let log = "";
    try {
      log = Deno.readTextFileSync(`${dir}/error.log`);
    } catch { /* not written */ }
    return stderr + log;
  };
  const stop = async () => {
    await terminate(child); // SIGTERM, nginx's fast shutdown: the master ends the worker, then itself
    await drained;
    await Deno.remove(dir, { recursive: true });
  };
  let exited = false;
  child.status.then(() => exited = true);
  let workerPid: number | undefined;
  for (let i = 0; i < 200 && !exited && workerPid === undefined; i++) {
    await sleep(25);
    workerPid = childPids(child.pid)[0];
    if (workerPid !== undefined && !(await listening(port))) workerPid = undefined;
  }
  if (workerPid === undefined) {
    const seen = output();
    await stop();
    throw new Error(`nginx did not start (${binary}):\n${seen.slice(-2000)}`);
  }
  return {
    pid: child.pid,
    masterPid: child.pid,
    workerPid,
    url: `http://127.0.0.1:${port}`,
    output,
    exited: child.status,
    stop,
  };
}

async function listening(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return true;
  } catch {
    return false;
  }
}
