/**
 * Who is calling, told to a backend (`identity:`, docs/identity.md): the identity headers, and
 * the signed assertion (an ES256 JWT, `aud` the server's service URI) re-used per person and
 * server for up to `ASSERTION_REUSE_MS` so that signing stays off the hot path. The cache is
 * keyed by everything the assertion states of the person, so one person's never reaches another.
 */
import type { HttpServerConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import { headerSafe } from "../core/header_safe.ts";
import { encodeBase64Url } from "../crypto/base64url.ts";
import { randomBase64Url } from "../crypto/random.ts";
import { ASSERTION_REUSE_MS, ASSERTION_TTL_MS, type AssertionKeys } from "./assertion_keys.ts";

/** The person a backend is told of. */
export interface Caller {
  /** The stable id (the identity provider's subject, `oidc:…`), as tokens' `sub`. */
  id: string;
  email?: string;
  /** Every group the provider named for them. */
  groups: readonly string[];
  /** The OAuth client calling for them, when known. */
  clientId?: string;
}

/** Assertions kept at most this many (person, server) pairs; the oldest goes first. */
const CACHE_LIMIT = 10_000;

/** `X-Gatehouse-User`, `-Email`, `-Groups`, `-Client`: every value safe for a header. */
export function identityHeaders(caller: Caller): Record<string, string> {
  return {
    "x-gatehouse-user": headerSafe(caller.id),
    "x-gatehouse-email": headerSafe(caller.email ?? ""),
    "x-gatehouse-groups": caller.groups.map(headerSafe).join(","),
    "x-gatehouse-client": headerSafe(caller.clientId ?? ""),
  };
}

interface Kept {
  token: string;
  signedAt: number;
}

export class IdentityAssertions {
  readonly #kept = new Map<string, Kept>();
  readonly #encoder = new TextEncoder();

  constructor(
    private readonly options: { issuer: string; keys: AssertionKeys; clock: Clock },
  ) {}

  /** The service URI of a server: an assertion's `aud`, and what a backend checks it against. */
  audienceOf(server: string): string {
    return `${this.options.issuer}/${server}`;
  }

  /**
   * A source of `caller`'s assertion for `server`: the one kept while younger than a minute,
   * else a new one. The cache key is made once per source (a session's backend connection).
   */
  source(caller: Caller, server: string): () => Promise<string> {
    const aud = this.audienceOf(server);
    const key = JSON.stringify([aud, caller.id, caller.email, caller.groups, caller.clientId]);
    let mine: Kept | undefined;
    return async () => {
      const now = this.options.clock.now();
      if (mine && now - mine.signedAt < ASSERTION_REUSE_MS) return mine.token;
      const kept = this.#kept.get(key);
      if (kept && now - kept.signedAt < ASSERTION_REUSE_MS) return (mine = kept).token;
      mine = { token: await this.#sign(caller, aud, now), signedAt: now };
      this.#kept.delete(key);
      if (this.#kept.size >= CACHE_LIMIT) this.#kept.delete(this.#kept.keys().next().value!);
      this.#kept.set(key, mine);
      return mine.token;
    };
  }

  async #sign(caller: Caller, aud: string, now: number): Promise<string> {
    const key = await this.options.keys.signing();
    const iat = Math.floor(now / 1000);
    const header = { alg: "ES256", typ: "JWT", kid: key.kid };
    const claims = {
      iss: this.options.issuer,
      aud,
      sub: caller.id,
      ...(caller.email !== undefined && { email: caller.email }),
      groups: caller.groups,
      ...(caller.clientId !== undefined && { client_id: caller.clientId }),
      iat,
      exp: iat + ASSERTION_TTL_MS / 1000,
      jti: randomBase64Url(16),
    };
    const input = `${this.#part(header)}.${this.#part(claims)}`;
    const signature = await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      key.privateKey,
      this.#encoder.encode(input),
    );
    return `${input}.${encodeBase64Url(new Uint8Array(signature))}`;
  }

  #part(value: unknown): string {
    return encodeBase64Url(this.#encoder.encode(JSON.stringify(value)));
  }
}

/**
 * What a server's backend is told of `caller`, per request: undefined when its `identity:` says
 * nothing. The plain headers are made once; the assertion is asked for per request.
 */
export function identitySource(
  server: HttpServerConfig,
  caller: Caller,
  assertions: IdentityAssertions | undefined,
): (() => Promise<Record<string, string>>) | undefined {
  const { headers, assertion } = server.identity;
  if (!headers && !assertion) return undefined;
  const plain = headers ? identityHeaders(caller) : {};
  if (!assertion || !assertions) return () => Promise.resolve(plain);
  const signed = assertions.source(caller, server.name);
  return async () => ({ ...plain, "x-gatehouse-assertion": await signed() });
}
