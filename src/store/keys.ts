/** Every Deno KV key prefix the gateway writes, in one place so that none collide. */
import { createHash } from "node:crypto";
import type { StoreKey } from "./store.ts";

/** Deno KV refuses a key whose encoding is longer than this ("Key too large for write"). */
export const MAX_KEY_BYTES = 2048;
/** A key part up to this long (encoded) is never hashed. */
export const MAX_PLAIN_PART_BYTES = 200;

/**
 * The key made of `parts`, short enough for Deno KV whatever the parts hold. Some parts come
 * from outside (the identity provider's subject, a metadata document's URL as client_id) and
 * may be kilobytes long, which KV refuses. A key that fits is kept exactly as it is, so every
 * record stored before this existed is still found under its old key; only a key that would be
 * refused has its long parts (over MAX_PLAIN_PART_BYTES) replaced by their SHA-256. The digest
 * is a byte array, a type no string part can equal, so a crafted short identifier never lands
 * on a hashed one. At most five parts of at most MAX_PLAIN_PART_BYTES each stay under the limit.
 */
export function boundedKey(parts: readonly string[]): StoreKey {
  const sizes = parts.map(encodedSize);
  if (sizes.reduce((sum, size) => sum + size, 0) <= MAX_KEY_BYTES) return parts;
  return parts.map((part, i) =>
    sizes[i] > MAX_PLAIN_PART_BYTES
      ? new Uint8Array(createHash("sha256").update(part).digest())
      : part
  );
}

/**
 * A key that is listed by its prefixes (an index): every part over MAX_PLAIN_PART_BYTES is
 * replaced by its SHA-256 whatever the total, so that the key of a prefix is always a prefix
 * of the key (`boundedKey` hashes only when the whole key would not fit, which depends on the
 * parts after the prefix too).
 */
export function prefixKey(parts: readonly string[]): StoreKey {
  return parts.map((part) =>
    encodedSize(part) > MAX_PLAIN_PART_BYTES
      ? new Uint8Array(createHash("sha256").update(part).digest())
      : part
  );
}

/** Deno KV's encoding of a string part: a type byte, UTF-8 with each NUL doubled, a NUL. */
function encodedSize(part: string): number {
  const bytes = new TextEncoder().encode(part);
  return bytes.length + bytes.filter((b) => b === 0).length + 2;
}

/**
 * Keys named by a digest the gateway computed stay plain tuples (43 characters, always short);
 * every key with an identifier in it goes through `boundedKey`.
 */
export const KEYS = {
  /** The generated master secret, when the config gives none. */
  masterSecret: ["gatehouse", "master-secret"] as const,
  /** Never written: /ready reads it to learn whether the storage answers. */
  readinessProbe: ["gatehouse", "ready-probe"] as const,
  /** The ACME account key for one directory (sealed), shared by replicas. */
  acmeAccount: (directory: string) => boundedKey(["tls", "acme-account", directory]),
  /** The certificate obtained for a domain through ACME, its private key sealed. */
  tlsCertificate: (domain: string) => boundedKey(["tls", "certificate", domain]),
  /** Which replica is ordering a domain's certificate now, and until when. */
  acmeOrderLock: (domain: string) => boundedKey(["tls", "acme-order", domain]),
  /** The key authorization an HTTP-01 challenge token is answered with, on any replica. */
  acmeChallenge: (token: string) => boundedKey(["tls", "acme-challenge", token]),
  /** A registered OAuth client by id. */
  client: (clientId: string) => boundedKey(["oauth", "client", clientId]),
  /** An /authorize request waiting for the person to log in or consent. */
  authorizeRequest: (id: string) => boundedKey(["oauth", "authorize", id]),
  /** The state of a login round trip at the identity provider, by hash of the state. */
  login: (stateHash: string) => ["oauth", "login", stateHash] as const,
  /** An authorization code, by hash; and the marker left when it is redeemed. */
  code: (hash: string) => ["oauth", "code", hash] as const,
  usedCode: (hash: string) => ["oauth", "code-used", hash] as const,
  /** A refresh token, by hash; and the marker left when it is rotated away. */
  refresh: (hash: string) => ["oauth", "refresh", hash] as const,
  usedRefresh: (hash: string) => ["oauth", "refresh-used", hash] as const,
  /** An ID-JAG's `jti`, per issuer, kept until the assertion expires: a replay is refused. */
  idJagJti: (issuer: string, jti: string) => boundedKey(["oauth", "id-jag-jti", issuer, jti]),
  /** A private_key_jwt client assertion's `jti`, per client, kept until it expires. */
  clientAssertionJti: (clientId: string, jti: string) =>
    boundedKey(["oauth", "client-assertion-jti", clientId, jti]),
  /** The groups a person's last login named, for ID-JAGs that carry none. */
  personGroups: (subject: string) => boundedKey(["oauth", "person-groups", subject]),
  /** A grant: everything issued from one authorization code, revocable as a whole. */
  family: (id: string) => boundedKey(["oauth", "family", id]),
  /** Every grant, for listing them all (`gatehouse grants list`). */
  families: ["oauth", "family"] as const,
  /**
   * Indexes of live grants by person (user id), by e-mail address (lower-cased) and by client,
   * so that one person's or one client's grants are listed without reading every grant.
   */
  grantsOfUser: (userId: string) => prefixKey(["oauth", "grant-user", userId]),
  grantOfUser: (userId: string, familyId: string) =>
    prefixKey(["oauth", "grant-user", userId, familyId]),
  grantsOfEmail: (email: string) => prefixKey(["oauth", "grant-email", email]),
  grantOfEmail: (email: string, familyId: string) =>
    prefixKey(["oauth", "grant-email", email, familyId]),
  grantsOfClient: (clientId: string) => prefixKey(["oauth", "grant-client", clientId]),
  grantOfClient: (clientId: string, familyId: string) =>
    prefixKey(["oauth", "grant-client", clientId, familyId]),
  /** Set once the grants opened before the indexes existed have been indexed. */
  grantIndexBuilt: ["oauth", "grant-index-built"] as const,
  /** Every live refresh token, for indexing grants opened before the indexes existed. */
  refreshTokens: ["oauth", "refresh"] as const,
  /**
   * A revoked grant, kept while any of its access tokens could still be presented; and the key
   * every revocation rewrites, whose version tells each replica to read the revocations again.
   */
  revocation: (familyId: string) => prefixKey(["oauth", "revoked", familyId]),
  revocations: ["oauth", "revoked"] as const,
  revocationEpoch: ["oauth", "revocation-epoch"] as const,
  /** A browser single sign-on session, by hash of its cookie. */
  ssoSession: (hash: string) => ["web", "sso", hash] as const,
  /**
   * The company identity provider's tokens for a person (sealed), from their latest sign-in,
   * by the provider's subject: for asking the provider about them again and acting as them there.
   */
  idpTokens: (subject: string) => boundedKey(["idp", "tokens", subject]),
  /** One replica's short hold on refreshing a person's provider tokens (idp_token_vault.ts). */
  idpRefreshLease: (subject: string) => boundedKey(["idp", "refreshing", subject]),
  /** An operator console session, by hash of its cookie. */
  adminSession: (hash: string) => ["web", "admin", hash] as const,
  /**
   * The ES256 keys that sign identity assertions to backends (private halves sealed), newest
   * first: one record every replica reads, rewritten by `gatehouse keys rotate`.
   */
  assertionKeys: ["identity", "assertion-keys"] as const,
  /** A person's approval of a client. */
  consent: (userId: string, clientId: string) => boundedKey(["web", "consent", userId, clientId]),
  /** A person's sealed credential for a service. */
  credential: (userId: string, service: string) =>
    boundedKey(["credentials", "user", userId, service]),
  /** Every shared session record (the console counts the replicas that renew them). */
  sharedSessions: ["mcp", "session"] as const,
  /** A client session another replica may continue (its backend speaks Streamable HTTP). */
  sharedSession: (sessionId: string) => boundedKey(["mcp", "session", sessionId]),
  /**
   * Gatehouse's dynamically registered client at a remote MCP server's authorization server,
   * one per issuer and callback, shared by every replica.
   */
  upstreamClient: (issuer: string, redirectUri: string) =>
    boundedKey(["credentials", "upstream-client", issuer, redirectUri]),
  /**
   * A tool's definition as approved, and a change to it waiting for an operator (tool
   * integrity), by server (an aggregate's member: the member's own name) and tool; listed per
   * server and all together by `gatehouse tools`.
   */
  toolDefinition: (server: string, tool: string) => prefixKey(["mcp", "tool", server, tool]),
  toolDefinitionsOf: (server: string) => prefixKey(["mcp", "tool", server]),
  toolDefinitions: ["mcp", "tool"] as const,
  /** Rewritten with every write of a server's tool records: replicas read them again when it moved. */
  toolEpoch: (server: string) => prefixKey(["mcp", "tool-epoch", server]),
  /** Set when a server's tools are first seen: a tool without a record after that is new. */
  toolServerSeen: (server: string) => prefixKey(["mcp", "tool-server", server]),
  /**
   * A held tool call waiting for a person's approval (approvals:), by its random id; every one
   * together for the lists; the call a retry of the same call finds (person, server, tool and
   * the digest of its arguments); and the ones a person has waiting, for the per-person cap.
   */
  approval: (id: string) => ["approvals", "call", id] as const,
  approvals: ["approvals", "call"] as const,
  approvalBinding: (person: string, server: string, tool: string, digest: string) =>
    boundedKey(["approvals", "binding", person, server, tool, digest]),
  approvalsWaitingOf: (person: string) => boundedKey(["approvals", "waiting", person]),
  /** A service OAuth connection waiting for the service's callback, by hash of its state. */
  serviceConnect: (stateHash: string) => ["credentials", "connect", stateHash] as const,
} as const;
