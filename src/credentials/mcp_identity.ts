/**
 * Who Gatehouse is at a remote MCP server's authorization server, in the order the MCP
 * authorization spec gives: the client an operator registered by hand; else Gatehouse's own
 * client ID metadata document (served under baseUrl) when the server advertises
 * `client_id_metadata_document_supported`; else a dynamic registration (RFC 7591), made once
 * per authorization server and callback and kept in storage (sealed) so that every replica and
 * every restart uses the same one, and made again after the server answers `invalid_client`.
 */
import * as oauth from "oauth4webapi";
import type { McpUserToken } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import { seal, unseal } from "../crypto/aead.ts";
import type { Logger } from "../observability/logger.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { ServiceOAuthError } from "./service_oauth.ts";

/** Gatehouse's client at one authorization server. */
export interface UpstreamClient {
  clientId: string;
  clientSecret?: string;
  authMethod: "none" | "client_secret_basic" | "client_secret_post";
  source: "configured" | "metadata_document" | "registered";
}

interface Registration {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method: UpstreamClient["authMethod"];
  /** Epoch ms; absent: the secret does not expire. */
  secretExpiresAt?: number;
}

export interface UpstreamIdentitiesDeps {
  store: Store;
  /** The vault's keys: a registered client's secret is sealed with `keys[0]`. */
  keys: CryptoKey[];
  clock: Clock;
  logger: Logger;
  /** Gatehouse's client ID metadata document, when it can serve one (an https baseUrl). */
  metadataDocumentUrl?: string;
  clientName: string;
}

export class UpstreamIdentities {
  constructor(private readonly deps: UpstreamIdentitiesDeps) {}

  /** The client to use at `server` for a service whose callback is `redirectUri`. */
  async clientFor(
    config: McpUserToken,
    server: oauth.AuthorizationServer,
    redirectUri: string,
    fetch: typeof globalThis.fetch,
  ): Promise<UpstreamClient> {
    if (config.clientId) {
      const secret = config.clientSecret?.reveal();
      return {
        clientId: config.clientId,
        clientSecret: secret,
        authMethod: secret ? secretMethod(server) : "none",
        source: "configured",
      };
    }
    if (server.client_id_metadata_document_supported === true && this.deps.metadataDocumentUrl) {
      return {
        clientId: this.deps.metadataDocumentUrl,
        authMethod: "none",
        source: "metadata_document",
      };
    }
    if (!server.registration_endpoint) {
      throw new ServiceOAuthError(
        "invalid_response",
        `${server.issuer} accepts neither Gatehouse's client ID metadata document nor dynamic registration: register a client there by hand and set userToken.clientId`,
      );
    }
    const key = KEYS.upstreamClient(server.issuer, redirectUri);
    const stored = await this.#read(key, server.issuer, redirectUri);
    if (stored && (stored.secretExpiresAt ?? Infinity) > this.deps.clock.now()) {
      return toClient(stored);
    }
    // Expired, or sealed under a secret no longer configured: replaced.
    await this.deps.store.delete(key);
    const registered = await this.#register(server, redirectUri, fetch);
    const sealed = await seal(
      this.deps.keys[0],
      JSON.stringify(registered),
      associatedData(server.issuer, redirectUri),
    );
    // Two replicas registering at once: the first stored wins, and both use it.
    const winner = await this.deps.store.setIfAbsent(key, { sealed });
    const kept = winner.sealed === sealed
      ? registered
      : await this.#read(key, server.issuer, redirectUri);
    this.deps.logger.info("registered at an upstream authorization server", {
      issuer: server.issuer,
      clientId: (kept ?? registered).client_id,
    });
    return toClient(kept ?? registered);
  }

  /**
   * Whether the server still knows a registered client. A server that lost it refuses the
   * person's browser at its authorization endpoint and never sends them back (RFC 6749
   * §4.1.2.1), so Gatehouse asks first: a code exchange with a code that cannot exist is
   * answered `invalid_client` for an unknown client and `invalid_grant` for a known one.
   */
  async stillKnown(
    server: oauth.AuthorizationServer,
    client: UpstreamClient,
    redirectUri: string,
    fetch: typeof globalThis.fetch,
  ): Promise<boolean> {
    const body = new URLSearchParams({
      grant_type: "authorization_code",
      code: `gatehouse-probe-${crypto.randomUUID()}`,
      redirect_uri: redirectUri,
      code_verifier: "gatehouse-probe-".padEnd(64, "0"),
      client_id: client.clientId,
    });
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    };
    if (client.authMethod === "client_secret_basic") {
      const pair = `${encodeURIComponent(client.clientId)}:${
        encodeURIComponent(client.clientSecret!)
      }`;
      headers.authorization = `Basic ${btoa(pair)}`;
    } else if (client.authMethod === "client_secret_post") {
      body.set("client_secret", client.clientSecret!);
    }
    const response = await fetch(server.token_endpoint!, { method: "POST", headers, body });
    const answer = await response.json().catch(() => undefined) as { error?: unknown } | undefined;
    return answer?.error !== "invalid_client";
  }

  /** Forgets a registration the server no longer knows (`invalid_client`). */
  async forget(server: oauth.AuthorizationServer, redirectUri: string): Promise<void> {
    await this.deps.store.delete(KEYS.upstreamClient(server.issuer, redirectUri));
  }

  async #read(
    key: ReturnType<typeof KEYS.upstreamClient>,
    issuer: string,
    redirectUri: string,
  ): Promise<Registration | undefined> {
    const record = await this.deps.store.get<{ sealed?: unknown }>(key);
    if (typeof record?.sealed !== "string") return undefined;
    const text = await unseal(this.deps.keys, record.sealed, associatedData(issuer, redirectUri));
    // Sealed under a secret no longer configured: register again.
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as Registration;
    } catch {
      return undefined;
    }
  }

  async #register(
    server: oauth.AuthorizationServer,
    redirectUri: string,
    fetch: typeof globalThis.fetch,
  ): Promise<Registration> {
    const method = server.token_endpoint_auth_methods_supported?.includes("none") ?? true
      ? "none"
      : secretMethod(server);
    const response = await fetch(server.registration_endpoint!, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({
        client_name: this.deps.clientName,
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: method,
      }),
    }).catch((error) => {
      throw new ServiceOAuthError(
        "unreachable",
        `registration at ${server.issuer} failed: ${(error as Error).message}`,
      );
    });
    const body = await response.json().catch(() => undefined) as
      | Record<string, unknown>
      | undefined;
    if (response.status !== 201 && response.status !== 200 || typeof body?.client_id !== "string") {
      const why = typeof body?.error === "string"
        ? `${body.error}${
          typeof body.error_description === "string" ? `: ${body.error_description}` : ""
        }`
        : `it answered ${response.status}`;
      throw new ServiceOAuthError(
        "refused",
        `registration at ${server.issuer} was refused (${why})`,
      );
    }
    const secret = typeof body.client_secret === "string" ? body.client_secret : undefined;
    const expires =
      typeof body.client_secret_expires_at === "number" && body.client_secret_expires_at > 0
        ? body.client_secret_expires_at * 1000
        : undefined;
    const granted = body.token_endpoint_auth_method;
    return {
      client_id: body.client_id,
      client_secret: secret,
      token_endpoint_auth_method: secret
        ? (granted === "client_secret_post" ? "client_secret_post" : "client_secret_basic")
        : "none",
      secretExpiresAt: expires,
    };
  }
}

/** What a client authenticates with at the token, registration and revocation endpoints. */
export function clientAuth(client: UpstreamClient): oauth.ClientAuth {
  if (client.authMethod === "client_secret_basic") {
    return oauth.ClientSecretBasic(client.clientSecret!);
  }
  if (client.authMethod === "client_secret_post") {
    return oauth.ClientSecretPost(client.clientSecret!);
  }
  return oauth.None();
}

function secretMethod(
  server: oauth.AuthorizationServer,
): "client_secret_basic" | "client_secret_post" {
  const supported = server.token_endpoint_auth_methods_supported;
  return !supported || supported.includes("client_secret_basic")
    ? "client_secret_basic"
    : "client_secret_post";
}

function toClient(registration: Registration): UpstreamClient {
  return {
    clientId: registration.client_id,
    clientSecret: registration.client_secret,
    authMethod: registration.token_endpoint_auth_method,
    source: "registered",
  };
}

function associatedData(issuer: string, redirectUri: string): string {
  return `gatehouse-upstream-client\0${issuer}\0${redirectUri}`;
}
