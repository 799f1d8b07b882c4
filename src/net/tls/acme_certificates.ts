/**
 * Certificates from an ACME certificate authority (RFC 8555) for baseUrl's host, through
 * `npm:acme-client` (no hand-written JWS). HTTP-01 only: the answer is put in storage and served
 * by whichever replica the authority reaches on `tls.redirectHttp` (redirect_http.ts); the
 * authority's own validation decides, the gateway never checks its own challenge first.
 * TLS-ALPN-01 is not offered: it needs a handshake that picks its certificate by the ALPN the
 * client asks for, and neither Deno's TLS nor its node:tls lets a server do that.
 *
 * The certificate and account key live in storage (acme_store.ts): a restart, or a second
 * replica, serves the stored certificate without asking again. Renewal starts `renewBefore`
 * ahead of expiry; one replica orders (a lock in storage), the others pick the new certificate
 * up from storage. A failed attempt is logged and counted, and tried again with back-off.
 */
import acme from "acme-client";
import https from "node:https";
import type { Clock, Timer } from "../../core/clock.ts";
import type { TlsConfig } from "../../config/types.ts";
import type { Logger } from "../../observability/logger.ts";
import type { AcmeStore } from "./acme_store.ts";
import { type CertifiedKey, checkCertifiedKey } from "./certificate.ts";

type AcmeSettings = NonNullable<TlsConfig["acme"]>;

export type AcmeOutcome = "obtained" | "failed";

export interface AcmeDeps {
  store: AcmeStore;
  logger: Logger;
  clock: Clock;
  /** This replica's name in the order lock. */
  owner: string;
  /** PEM of the CA certificates trusted for the directory (`acme.caRoots`), if any. */
  caRoots?: string;
  /** One call per attempt to obtain a certificate. */
  attempted?(outcome: AcmeOutcome): void;
}

/** Back-off after failures: 2 s, 4 s, … at most an hour. */
const FIRST_RETRY_MS = 2_000;
const LONGEST_RETRY_MS = 3600_000;
/** A certificate obtained this recently is not renewed again on its own (only on SIGHUP). */
const FRESH_MS = 3600_000;
/** However far off renewal is, storage is looked at this often (another replica renewed). */
const LONGEST_CHECK_MS = 3600_000;
/** While another replica orders, how often to look for its certificate. */
const WAIT_FOR_OTHER_MS = 5_000;
/** Every request to the directory is bounded. */
const REQUEST_TIMEOUT_MS = 30_000;
const MAX_ANSWER_BYTES = 1024 * 1024;

export class AcmeCertificates {
  #failures = 0;
  #timer?: Timer;
  #closed = false;
  #running?: Promise<void>;
  #serving?: CertifiedKey & { obtainedAt?: number };
  #onChange?: (certificate: CertifiedKey) => void;

  constructor(readonly settings: AcmeSettings, private readonly deps: AcmeDeps) {
    // acme-client talks through its own axios instance: one directory per process, so its
    // defaults are this gateway's (bounded in time and size, trusting caRoots when given).
    acme.axios.defaults.timeout = REQUEST_TIMEOUT_MS;
    acme.axios.defaults.maxContentLength = MAX_ANSWER_BYTES;
    acme.axios.defaults.maxBodyLength = MAX_ANSWER_BYTES;
    // Its own retries (5, up to 75 s) would hide a failure behind a long wait; ours back off.
    const retries = (acme.axios.defaults as unknown as { acmeSettings: Record<string, number> })
      .acmeSettings;
    retries.retryMaxAttempts = 1;
    retries.retryDefaultDelay = 1;
    if (deps.caRoots) acme.axios.defaults.httpsAgent = new https.Agent({ ca: deps.caRoots });
    this.#probe = deps.caRoots ? Deno.createHttpClient({ caCerts: [deps.caRoots] }) : undefined;
  }

  readonly #probe?: Deno.HttpClient;

  /** Fails with a plain message when the directory cannot be reached at all. */
  async #reachable(): Promise<void> {
    const { directory } = this.settings;
    try {
      const response = await fetch(directory, {
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        ...(this.#probe && { client: this.#probe }),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`it answered ${response.status}`);
    } catch (error) {
      throw new Error(`cannot reach the ACME directory ${directory}: ${problemOf(error)}`);
    }
  }

  /**
   * A certificate to start serving: the stored one while it is valid (renewed later if due),
   * else one obtained now, tried again with back-off until it comes or `close()`. Replicas
   * starting together order once: the one holding the order lock orders, the others wait for
   * its certificate in storage.
   */
  async initial(): Promise<CertifiedKey> {
    const { store, clock, owner } = this.deps;
    const { domain } = this.settings;
    for (let waited = false;; waited = true) {
      if (this.#closed) throw new Error("closed before a TLS certificate was obtained");
      const stored = await store.certificate(domain);
      if (stored && stored.notAfter > clock.now()) {
        this.deps.logger.info("TLS certificate from storage", describe(stored));
        this.#serving = stored;
        return stored;
      }
      let wait = WAIT_FOR_OTHER_MS;
      if (await store.lock(domain, owner)) {
        const obtained = await this.#attempt().finally(() =>
          store.unlock(domain, owner).catch(() => {})
        );
        if (obtained) {
          this.#serving = { ...obtained, obtainedAt: clock.now() };
          return obtained;
        }
        wait = this.#retryMs();
      } else if (!waited) {
        this.deps.logger.info("another replica is ordering the TLS certificate; waiting for it", {
          domain,
        });
      }
      await new Promise<void>((resolve) => {
        this.#timer = clock.setTimeout(resolve, wait);
      });
    }
  }

  /** Keeps the served certificate current from now on: `onChange` serves a new one. */
  start(onChange: (certificate: CertifiedKey) => void): void {
    this.#onChange = onChange;
    this.#schedule(0);
  }

  /** SIGHUP: look now, and renew if the certificate is due, however recently it was obtained. */
  checkNow(): Promise<void> {
    return this.#check(true);
  }

  /** The HTTP-01 answer for `token`, for the redirect listener. */
  challenge(token: string): Promise<string | undefined> {
    return this.deps.store.challenge(token);
  }

  close(): void {
    this.#closed = true;
    this.#timer?.clear();
    this.#probe?.close();
  }

  #schedule(ms: number): void {
    this.#timer?.clear();
    if (this.#closed) return;
    this.#timer = this.deps.clock.setTimeout(() => void this.#check(false), ms, { unref: true });
  }

  /** One look at the certificate; never rejects (a timer or SIGHUP starts it, nobody awaits). */
  #check(forced: boolean): Promise<void> {
    this.#running ??= this.#checkOnce(forced)
      .catch((error) => {
        // The storage failed us (an ACME failure is handled in #attempt): look again later.
        this.deps.logger.error("could not check the TLS certificate; trying again", {
          problem: problemOf(error),
        });
        this.#schedule(WAIT_FOR_OTHER_MS);
      })
      .finally(() => this.#running = undefined);
    return this.#running;
  }

  async #checkOnce(forced: boolean): Promise<void> {
    const { store, clock } = this.deps;
    const { domain, renewBeforeMs } = this.settings;
    // Another replica may have renewed: serve what storage holds if it is newer.
    const stored = await store.certificate(domain).catch(() => undefined);
    if (stored && stored.notAfter > (this.#serving?.notAfter ?? 0)) this.#serve(stored);
    const current = this.#serving;
    const now = clock.now();
    const dueAt = (current?.notAfter ?? 0) - renewBeforeMs;
    // Fresh: obtained within the hour, not renewed again on its own. A retry after a failed
    // attempt, or a SIGHUP, goes ahead all the same.
    const fresh = !forced && this.#failures === 0 && current?.obtainedAt !== undefined &&
      now - current.obtainedAt < FRESH_MS;
    if (current && (now < dueAt || fresh)) {
      const wait = fresh ? FRESH_MS : dueAt - now;
      return this.#schedule(Math.min(wait, LONGEST_CHECK_MS));
    }
    if (!(await store.lock(domain, this.deps.owner))) {
      return this.#schedule(WAIT_FOR_OTHER_MS); // another replica is ordering
    }
    let obtained: CertifiedKey | undefined;
    try {
      obtained = await this.#attempt();
    } finally {
      await store.unlock(domain, this.deps.owner).catch(() => {});
    }
    if (obtained) {
      this.#serve({ ...obtained, obtainedAt: clock.now() });
      this.#schedule(Math.min(FRESH_MS, LONGEST_CHECK_MS));
    } else this.#schedule(this.#retryMs());
  }

  #serve(certificate: CertifiedKey & { obtainedAt?: number }): void {
    if (certificate.cert === this.#serving?.cert) return;
    this.#serving = certificate;
    this.#onChange?.(certificate);
  }

  #retryMs(): number {
    return Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, this.#failures - 1));
  }

  /** One attempt to obtain a certificate: stored and returned, or undefined (logged). */
  async #attempt(): Promise<CertifiedKey | undefined> {
    const { logger } = this.deps;
    const { domain, directory } = this.settings;
    try {
      const certificate = await this.#order();
      this.#failures = 0;
      this.deps.attempted?.("obtained");
      logger.info("TLS certificate obtained from the ACME directory", {
        directory,
        ...describe(certificate),
      });
      return certificate;
    } catch (error) {
      this.#failures++;
      this.deps.attempted?.("failed");
      logger.error("cannot obtain a TLS certificate from the ACME directory; trying again", {
        directory,
        domain,
        attempt: this.#failures,
        retryInSeconds: Math.round(this.#retryMs() / 1000),
        problem: problemOf(error),
        hint: "check that the directory is reachable (acme.caRoots for a private CA) and that " +
          `http://${domain}/.well-known/acme-challenge/ reaches tls.redirectHttp from the CA`,
      });
      return undefined;
    }
  }

  async #order(): Promise<CertifiedKey> {
    await this.#reachable();
    const { store } = this.deps;
    const { domain, directory, email } = this.settings;
    const accountKey = await store.accountKey(
      directory,
      async () => (await acme.crypto.createPrivateEcdsaKey()).toString(),
    );
    const client = new acme.Client({ directoryUrl: directory, accountKey });
    const privateKey = (await acme.crypto.createPrivateEcdsaKey()).toString();
    const [, csr] = await acme.crypto.createCsr(
      { commonName: domain, altNames: [domain] },
      privateKey,
    );
    const cert = await client.auto({
      csr,
      email,
      termsOfServiceAgreed: true,
      challengePriority: ["http-01"],
      // The authority's validation decides; a self-check could hang behind NAT or a firewall.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        if (challenge.type !== "http-01") throw new Error(`${challenge.type} is not offered`);
        await store.setChallenge(challenge.token, keyAuthorization);
      },
      challengeRemoveFn: async (_authz, challenge) => {
        await store.removeChallenge(challenge.token);
      },
    });
    const certificate = checkCertifiedKey(cert, privateKey, {
      cert: "the certificate the ACME directory issued",
      key: "the key it was ordered for",
    });
    await store.saveCertificate(domain, cert, privateKey);
    return certificate;
  }
}

function describe(certificate: CertifiedKey) {
  return { names: certificate.names, notAfter: new Date(certificate.notAfter).toISOString() };
}

/** The directory's problem document, or the error's message: never a key. */
function problemOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // acme-client's retry reads a response a failed connection never had.
  if (/reading 'config'|reading 'status'/.test(message)) {
    return "the ACME directory stopped answering (the connection failed)";
  }
  const cause = error instanceof Error && error.cause instanceof Error
    ? `: ${error.cause.message}`
    : "";
  return (message + cause).slice(0, 500);
}
