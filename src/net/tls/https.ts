/**
 * HTTPS in the binary (`tls:`), put together for main.ts: the TLS port the front accepts from,
 * its certificate kept current (files read again on change and on SIGHUP; ACME obtained and
 * renewed), and the redirect listener (`tls.redirectHttp`, which also answers HTTP-01), itself
 * behind a front of its own.
 */
import type { Clock } from "../../core/clock.ts";
import type { ConnectionLimits, TlsConfig } from "../../config/types.ts";
import type { Logger } from "../../observability/logger.ts";
import type { GatewayMetrics } from "../../observability/metrics.ts";
import type { Store } from "../../store/store.ts";
import { REDIRECT_MAX_CONNECTIONS } from "../descriptors.ts";
import { type PublicServer, servePublic } from "../public_server.ts";
import type { FrontEvents } from "../tcp_front.ts";
import type { AcmeCertificates } from "./acme_certificates.ts";
import { AcmeStore } from "./acme_store.ts";
import { CertificateError, type CertifiedKey, readCertificateFiles } from "./certificate.ts";
import { keepFilesCurrent } from "./file_certificates.ts";
import { redirectHandler } from "./redirect_http.ts";
import { TlsPort } from "./tls_port.ts";

export interface Https {
  /** Where the front accepts TLS connections. */
  port: TlsPort;
  /** The redirect listener, when `tls.redirectHttp` is set. */
  redirect?: PublicServer;
  /** SIGHUP: read the certificate files again, or look at the ACME certificate now. */
  reload(): Promise<void>;
  close(): Promise<void>;
}

export interface HttpsSettings {
  tls: TlsConfig;
  listen: { hostname: string; port: number };
  baseUrl: string;
  connections: ConnectionLimits;
  /** The redirect listener's cap (descriptors.ts `connectionCaps`); left out: its fixed one. */
  redirectMaxConnections?: number;
}

export interface HttpsDeps {
  logger: Logger;
  clock: Clock;
  events?: FrontEvents;
  metrics: GatewayMetrics;
  /** For ACME: the storage replicas share, this replica's name, the keys that seal. */
  store: Store;
  owner: string;
  keys: () => Promise<CryptoKey[]>;
}

export async function startHttps(settings: HttpsSettings, deps: HttpsDeps): Promise<Https> {
  const { tls, listen } = settings;
  const { logger } = deps;
  // Loaded only for ACME: acme-client and what it pulls in cost about 0.2 s at every start.
  const acme = tls.acme && new (await loadAcme())(tls.acme, {
    store: new AcmeStore(deps.store, deps.clock, await deps.keys()),
    logger,
    clock: deps.clock,
    owner: deps.owner,
    caRoots: tls.acme.caRootsFile && await readCaRoots(tls.acme.caRootsFile),
    attempted: (outcome) => deps.metrics.acmeAttempts.inc({ outcome }),
  });
  // First: the authority checks HTTP-01 here before the first certificate exists.
  const redirect = tls.redirectHttp && await servePublic(
    {
      ...tls.redirectHttp,
      // Its own small cap, out of the same descriptors as the main port's (descriptors.ts).
      limits: {
        ...settings.connections,
        maxConnections: settings.redirectMaxConnections ?? REDIRECT_MAX_CONNECTIONS,
      },
      logger,
      clock: deps.clock,
      events: deps.events,
    },
    redirectHandler(settings.baseUrl, acme ? (token) => acme.challenge(token) : undefined),
  );
  let port: TlsPort | undefined;
  try {
    const certificate = acme ? await acme.initial() : await readCertificateFiles(tls.files!);
    port = await TlsPort.listen(listen.hostname, listen.port, certificate);
    logger.info("serving https", describe(certificate));
  } catch (error) {
    acme?.close();
    await redirect?.close();
    throw error;
  }
  const tlsPort = port;
  deps.metrics.registry.reading(
    "gatehouse_tls_certificate_expiry_timestamp_seconds",
    "When the TLS certificate served now expires (Unix time).",
    "gauge",
    () => [[{}, Math.floor(tlsPort.certificate.notAfter / 1000)]],
  );
  const replaced = (certificate: CertifiedKey) => {
    tlsPort.replace(certificate);
    logger.info("TLS certificate replaced", describe(certificate));
  };
  const files = tls.files && keepFilesCurrent(tls.files, tlsPort, { ...deps });
  acme?.start((certificate) => {
    try {
      replaced(certificate);
    } catch (error) {
      logger.error("the new TLS certificate was refused; the previous one is still served", {
        problem: (error as Error).message,
      });
    }
  });
  return {
    port: tlsPort,
    redirect,
    reload: () => files ? files.reload("SIGHUP") : acme!.checkNow(),
    async close() {
      files?.close();
      acme?.close();
      await redirect?.close();
    },
  };
}

async function readCaRoots(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    throw new CertificateError(
      "unreadable",
      `cannot read tls.acme.caRoots ${path}: ${(error as Error).message}`,
    );
  }
}

function describe(certificate: CertifiedKey) {
  return { names: certificate.names, notAfter: new Date(certificate.notAfter).toISOString() };
}

async function loadAcme(): Promise<typeof AcmeCertificates> {
  return (await import("./acme_certificates.ts")).AcmeCertificates;
}
