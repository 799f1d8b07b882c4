/**
 * `tls.cert` and `tls.key` kept current: read again on SIGHUP and when either file changes
 * (certbot, cert-manager and friends replace them in place or through a symlink), and served to
 * the next connection; connections already open keep the certificate they began with. A pair
 * that does not check out (half-written, a key of another certificate) changes nothing: the
 * previous certificate stays, and the error is logged.
 */
import type { Clock, Timer } from "../../core/clock.ts";
import type { Logger } from "../../observability/logger.ts";
import { type CertifiedKey, readCertificateFiles } from "./certificate.ts";
import type { TlsPort } from "./tls_port.ts";

/** Writers put the certificate and the key down one after the other: wait for both. */
const SETTLE_MS = 300;

export interface CertificateFiles {
  /** Reads the files again; resolves once the new certificate is served (or refused). */
  reload(reason: string): Promise<void>;
  close(): void;
}

export function keepFilesCurrent(
  files: { certFile: string; keyFile: string },
  port: TlsPort,
  deps: { logger: Logger; clock: Clock },
): CertificateFiles {
  const { logger, clock } = deps;
  let closed = false;
  let pending: Timer | undefined;
  let reloading = Promise.resolve();

  const reloadNow = async (reason: string) => {
    let next: CertifiedKey;
    try {
      next = await readCertificateFiles(files);
    } catch (error) {
      logger.error("the TLS certificate was not reloaded; the previous one is still served", {
        reason,
        problem: (error as Error).message,
      });
      return;
    }
    const current = port.certificate;
    if (next.cert === current.cert && next.key === current.key) return;
    try {
      port.replace(next);
    } catch (error) {
      logger.error("the TLS certificate was refused; the previous one is still served", {
        reason,
        problem: (error as Error).message,
      });
      return;
    }
    logger.info("TLS certificate replaced", {
      reason,
      names: next.names,
      notAfter: new Date(next.notAfter).toISOString(),
    });
  };
  const reload = (reason: string) => reloading = reloading.then(() => reloadNow(reason));

  // Watch the directories, not the files: a file replaced by a rename (or a symlink switched)
  // is a new inode, which a watch on the old one never hears about. Any change there reads the
  // pair again (after a pause for the writer); an unchanged pair is left alone.
  const dirs = [
    ...new Set(
      [files.certFile, files.keyFile].map(absolute).map((path) =>
        path.slice(0, path.lastIndexOf("/")) || "/"
      ),
    ),
  ];
  let watcher: Deno.FsWatcher | undefined;
  try {
    watcher = Deno.watchFs(dirs, { recursive: false });
  } catch (error) {
    logger.warn("cannot watch the TLS certificate files; they are read again on SIGHUP only", {
      dirs,
      error,
    });
  }
  if (watcher) {
    const events = watcher;
    void (async () => {
      try {
        for await (const _ of events) {
          if (closed) break;
          pending?.clear();
          pending = clock.setTimeout(() => void reload("the files changed"), SETTLE_MS);
        }
      } catch { /* closed */ }
    })();
  }
  return {
    reload: (reason) => reload(reason),
    close() {
      closed = true;
      pending?.clear();
      try {
        watcher?.close();
      } catch { /* closed already */ }
    },
  };
}

function absolute(path: string): string {
  return path.startsWith("/") ? path : `${Deno.cwd()}/${path.replace(/^\.\//, "")}`;
}
