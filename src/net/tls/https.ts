/**
 * HTTPS in the binary (`tls:`), put together for main.ts: the TLS port the front accepts from,
 * its certificate kept current (files read again on change and on SIGHUP; ACME obtained and
 * renewed), and the redirect listener (`tls.redirectHttp`), itself behind a front of its own.
 */
import type { Clock } from "../../core/clock.ts";
import type { ConnectionLimits, TlsConfig } from "../../config/types.ts";
import type { Logger } from "../../observability/logger.ts";
import { type PublicServer, servePublic } from "../public_server.ts";
import type { FrontEvents } from "../tcp_front.ts";
import { readCertificateFiles } from "./certificate.ts";
import { keepFilesCurrent } from "./file_certificates.ts";
import { redirectHandler } from "./redirect_http.ts";
import { TlsPort } from "./tls_port.ts";

export interface Https {
  /** Where the front accepts TLS connections. */
  port: TlsPort;
  /** The redirect listener, when `tls.redirectHttp` is set. */
  redirect?: PublicServer;
  /** SIGHUP: read the certificate files again. */
  reload(reason: string): Promise<void>;
  close(): Promise<void>;
}

export interface HttpsSettings {
  tls: TlsConfig;
  listen: { hostname: string; port: number };
  baseUrl: string;
  connections: ConnectionLimits;
}

export interface HttpsDeps {
  logger: Logger;
  clock: Clock;
  events?: FrontEvents;
}

export async function startHttps(settings: HttpsSettings, deps: HttpsDeps): Promise<Https> {
  const { tls, listen } = settings;
  if (!tls.files) throw new Error("tls.acme is not available in this build");
  const certificate = await readCertificateFiles(tls.files);
  const port = await TlsPort.listen(listen.hostname, listen.port, certificate);
  deps.logger.info("serving https", {
    names: certificate.names,
    notAfter: new Date(certificate.notAfter).toISOString(),
  });
  const files = keepFilesCurrent(tls.files, port, deps);
  let redirect: PublicServer | undefined;
  try {
    redirect = tls.redirectHttp && await servePublic(
      {
        ...tls.redirectHttp,
        limits: settings.connections,
        logger: deps.logger,
        clock: deps.clock,
        events: deps.events,
      },
      redirectHandler(settings.baseUrl),
    );
  } catch (error) {
    files.close();
    port.close();
    throw error;
  }
  return {
    port,
    redirect,
    reload: (reason) => files.reload(reason),
    async close() {
      files.close();
      await redirect?.close();
    },
  };
}
