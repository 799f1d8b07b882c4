/**
 * Run by `deno task test` before the suite: the tests need programs from Debian that Deno cannot
 * bring: Chromium (the page tests' real browser), openssl (throwaway TLS certificates), nginx
 * (a real reverse proxy in front of the gateway), pebble (a real ACME server) and
 * PostgreSQL (the second storage engine, and replicas sharing it). Installs
 * whichever is missing with apt-get, or says what to do.
 */
const needed = [
  { program: Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium", pkg: "chromium" },
  { program: "openssl", pkg: "openssl" },
  // A real reverse proxy in front of the gateway (trustedProxies), and the bench's anchor.
  { program: "/usr/sbin/nginx", pkg: "nginx-light" },
  // A real ACME server for tls.acme.
  { program: "pebble", pkg: "pebble" },
  // A real PostgreSQL for storage: postgres:// (tests/fixtures/postgres.ts starts its clusters).
  { program: "/usr/lib/postgresql", pkg: "postgresql" },
];

async function found(program: string): Promise<boolean> {
  if (program.startsWith("/")) return await Deno.stat(program).then(() => true, () => false);
  const which = await new Deno.Command("sh", { args: ["-c", `command -v ${program}`] }).output();
  return which.success;
}

const missing: string[] = [];
for (const { program, pkg } of needed) if (!(await found(program))) missing.push(pkg);
if (missing.length > 0) {
  console.error(`tests/setup.ts: installing ${missing.join(", ")} with apt-get …`);
  const install = `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${
    missing.join(" ")
  }`;
  const root = Deno.uid?.() === 0;
  const result = await new Deno.Command(root ? "sh" : "sudo", {
    args: root ? ["-c", install] : ["sh", "-c", install],
    stdout: "null",
  }).output().catch(() => undefined);
  if (!result?.success) {
    console.error(
      `tests/setup.ts: could not install ${missing.join(", ")}; install them yourself ` +
        `(sudo apt-get install ${missing.join(" ")}), or set CHROMIUM_PATH to a Chromium binary`,
    );
    Deno.exit(1);
  }
}
