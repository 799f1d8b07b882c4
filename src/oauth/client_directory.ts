/**
 * Where clients come from: registrations kept in the store, and client ID metadata documents
 * (MCP 2025-11-25) fetched from the client's own https URL and cached as its headers allow.
 */
import type { Clock } from "../core/clock.ts";
import { type ClientId, isClientMetadataUrl, parseClientId } from "../core/ids.ts";
import { sha256Base64Url } from "../crypto/base64url.ts";
import { importPublicJwk, keyFits, type PublicKeyAlgorithm } from "../crypto/jws.ts";
import { randomBase64Url } from "../crypto/random.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { type ClientRecord, type RegistrationDraft, validateRegistration } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import { IssuerKeys, type KeyLookup, parseJwks } from "./issuer_keys.ts";

/** The outside world's part of a metadata-document lookup: an SSRF-guarded GET. */
export type MetadataDocumentFetcher = (
  url: string,
) => Promise<{ body: unknown; maxAgeSeconds: number }>;

export interface ClientDirectoryOptions {
  store: Store;
  clock: Clock;
  unusedClientTtlMs: number;
  /** Private-use redirect URI schemes admitted besides https and loopback http. */
  redirectSchemes: string[];
  /** Absent when metadata documents are turned off. */
  fetchMetadataDocument?: MetadataDocumentFetcher;
  /** The operator's clients (`oauth.clients`), with their secrets' hashes. */
  configured?: ClientRecord[];
  /** This authorization server's issuer: the one audience a client assertion may name. */
  issuer?: string;
  /** An SSRF-guarded GET of a private_key_jwt client's `jwks_uri`. */
  fetchJwks?: (url: string) => Promise<unknown>;
}

const MAX_CACHED_DOCUMENTS = 1_000;
const MAX_CACHE_SECONDS = 24 * 60 * 60;

export class ClientDirectory {
  readonly #documents = new Map<string, { client: ClientRecord; until: number }>();
  readonly #configured: Map<string, ClientRecord>;
  /** private_key_jwt clients' `jwks_uri` keys, fetched as an issuer's are (once per 30 s). */
  readonly #jwksUriKeys: IssuerKeys;

  constructor(private readonly options: ClientDirectoryOptions) {
    this.#configured = new Map((options.configured ?? []).map((c) => [c.clientId, c]));
    this.#jwksUriKeys = new IssuerKeys(
      (url) =>
        options.fetchJwks?.(url) ?? Promise.reject(new Error("no fetch of jwks_uri is configured")),
      options.clock,
    );
  }

  now(): number {
    return this.options.clock.now();
  }

  /**
   * Whether `aud` names this authorization server, as a client assertion must: its issuer, alone
   * (draft-ietf-oauth-rfc7523bis). The token endpoint's URL is not taken, nor a list naming
   * others too: another authorization server whose metadata gave Gatehouse's token endpoint as
   * its own would get an assertion it could replay here.
   */
  isOwnAudience(aud: unknown): boolean {
    const issuer = this.options.issuer;
    const single = Array.isArray(aud) && aud.length === 1 ? aud[0] : aud;
    return issuer !== undefined && single === issuer;
  }

  /** The keys a private_key_jwt client published that may have signed with `alg` as `kid`. */
  async assertionKeys(
    client: ClientRecord,
    kid: string | undefined,
    alg: PublicKeyAlgorithm,
  ): Promise<KeyLookup> {
    if (client.jwksUri) return await this.#jwksUriKeys.keysFor(client.jwksUri, kid, alg);
    let jwks;
    try {
      jwks = parseJwks(client.jwks);
    } catch {
      return { ok: false, reason: "the client's metadata document has no usable jwks" };
    }
    const fitting = jwks.filter((jwk) =>
      (kid === undefined || jwk.kid === kid) && keyFits(jwk, alg)
    );
    const keys = (await Promise.all(fitting.map((jwk) => importPublicJwk(jwk, alg))))
      .filter((key): key is CryptoKey => key !== undefined);
    return keys.length > 0 ? { ok: true, keys } : {
      ok: false,
      reason: `the client publishes no ${alg} key${kid ? ` with kid ${kid.slice(0, 100)}` : ""}`,
    };
  }

  /** Records a client assertion's `jti` until `expiresAt`; false when it was seen before. */
  async recordAssertionJti(client: ClientRecord, jti: string, expiresAt: number): Promise<boolean> {
    const key = KEYS.clientAssertionJti(client.clientId, jti);
    return await this.options.store.commitIfUnchanged([{ key, version: null }], {
      writes: [{ key, value: { expiresAt }, expiresAt }],
    });
  }

  /**
   * The client a token request names, as sent: a configured client by its name, else a
   * registered or metadata-document client by its id.
   */
  async named(text: string | undefined): Promise<ClientRecord | undefined> {
    if (text === undefined) return undefined;
    const configured = this.#configured.get(text);
    if (configured) return configured;
    const clientId = parseClientId(text);
    return clientId ? await this.find(clientId) : undefined;
  }

  /**
   * Validates registration metadata (throwing `OAuthError`) and stores it; returns the record
   * and, for confidential clients, the secret.
   */
  async register(body: unknown): Promise<{ client: ClientRecord; secret?: string }> {
    const draft = validateRegistration(body, this.options.redirectSchemes);
    const now = this.options.clock.now();
    const clientId = `gh_${randomBase64Url(18)}` as ClientId;
    const secret = draft.tokenEndpointAuthMethod === "none" ? undefined : randomBase64Url(32);
    const client: ClientRecord = {
      ...draft,
      clientId,
      clientSecretHash: secret ? await sha256Base64Url(secret) : undefined,
      issuedAt: Math.floor(now / 1000),
      expiresAt: now + this.options.unusedClientTtlMs,
      source: "registered",
    };
    await this.options.store.set(KEYS.client(clientId), client, client.expiresAt);
    return { client, secret };
  }

  /** The client, or undefined when it is unknown, expired, or its document is unusable. */
  async find(clientId: ClientId): Promise<ClientRecord | undefined> {
    const configured = this.#configured.get(clientId);
    if (configured) return configured;
    if (isClientMetadataUrl(clientId)) return await this.#fromDocument(clientId);
    const client = await this.options.store.get<ClientRecord>(KEYS.client(clientId));
    if (!client) return undefined;
    if (client.expiresAt !== undefined && client.expiresAt <= this.options.clock.now()) {
      return undefined;
    }
    return client;
  }

  /** A client that obtained a token is no longer "unused" and stops expiring. */
  async markUsed(client: ClientRecord): Promise<void> {
    if (client.source !== "registered" || client.expiresAt === undefined) return;
    await this.options.store.set(KEYS.client(client.clientId), { ...client, expiresAt: undefined });
  }

  async #fromDocument(url: ClientId): Promise<ClientRecord | undefined> {
    const fetchDocument = this.options.fetchMetadataDocument;
    if (!fetchDocument) return undefined;
    const now = this.options.clock.now();
    const cached = this.#documents.get(url);
    if (cached && cached.until > now) return cached.client;
    this.#documents.delete(url);
    let fetched: Awaited<ReturnType<MetadataDocumentFetcher>>;
    try {
      fetched = await fetchDocument(url);
    } catch (error) {
      // Nothing of why reaches the page: what a host resolves to, and whether a port
      // answers, would make /authorize a scanner of the gateway's network for anyone.
      throw new OAuthError(
        "invalid_client",
        "the client's metadata document could not be fetched",
        `${url}: ${describeError(error)}`,
      );
    }
    const client = clientFromDocument(
      url,
      fetched.body,
      Math.floor(now / 1000),
      this.options.redirectSchemes,
    );
    const seconds = Math.min(fetched.maxAgeSeconds, MAX_CACHE_SECONDS);
    if (seconds > 0) {
      if (this.#documents.size >= MAX_CACHED_DOCUMENTS) {
        this.#documents.delete(this.#documents.keys().next().value!);
      }
      this.#documents.set(url, { client, until: now + seconds * 1000 });
    }
    return client;
  }
}

/** Validates a fetched metadata document as the client it describes. */
export function clientFromDocument(
  url: ClientId,
  body: unknown,
  nowSeconds: number,
  redirectSchemes: string[] = [],
): ClientRecord {
  if (!body || typeof body !== "object" || Array.isArray(body)) {
    throw new OAuthError("invalid_client", "the client metadata document is not a JSON object");
  }
  if ((body as Record<string, unknown>).client_id !== url) {
    throw new OAuthError(
      "invalid_client",
      "the client metadata document's client_id does not equal its URL",
    );
  }
  const raw = body as Record<string, unknown>;
  const method = raw.token_endpoint_auth_method ?? "none";
  if (method !== "none" && method !== "private_key_jwt") {
    throw new OAuthError(
      "invalid_client",
      'a client metadata document must use token_endpoint_auth_method "none" or "private_key_jwt"',
    );
  }
  const keys = method === "private_key_jwt" ? documentKeys(raw) : {};
  let draft: RegistrationDraft;
  try {
    draft = {
      ...validateRegistration(
        { ...body, token_endpoint_auth_method: method },
        redirectSchemes,
        ["private_key_jwt"],
      ),
      ...keys,
    };
  } catch (error) {
    throw new OAuthError(
      "invalid_client",
      `the client metadata document is invalid: ${(error as OAuthError).description}`,
    );
  }
  return { ...draft, clientId: url, issuedAt: nowSeconds, source: "metadata-document" };
}

/** A private_key_jwt document's keys: `jwks` inline, or an https `jwks_uri`, not both. */
function documentKeys(raw: Record<string, unknown>): { jwks?: unknown; jwksUri?: string } {
  const refuse = (why: string) =>
    new OAuthError("invalid_client", `the client metadata document ${why}`);
  if (raw.jwks !== undefined && raw.jwks_uri !== undefined) {
    throw refuse("must give jwks or jwks_uri, not both");
  }
  if (raw.jwks !== undefined) {
    try {
      parseJwks(raw.jwks);
    } catch {
      throw refuse("has a jwks without a keys array");
    }
    return { jwks: raw.jwks };
  }
  if (typeof raw.jwks_uri === "string" && raw.jwks_uri.startsWith("https://")) {
    return { jwksUri: raw.jwks_uri };
  }
  throw refuse("uses private_key_jwt without jwks or an https jwks_uri");
}

/** An error's message with its cause, which is where fetch puts the reason (TLS, DNS…). */
function describeError(error: unknown): string {
  const message = (error as Error).message ?? String(error);
  const cause = (error as { cause?: { message?: string } }).cause?.message;
  return cause ? `${message} (${cause})` : message;
}
