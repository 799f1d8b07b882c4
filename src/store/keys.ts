/** Every Deno KV key prefix the gateway writes, in one place so that none collide. */
export const KEYS = {
  /** The generated master secret, when the config gives none. */
  masterSecret: ["gatehouse", "master-secret"] as const,
  /** A registered OAuth client by id. */
  client: (clientId: string) => ["oauth", "client", clientId] as const,
  /** An /authorize request waiting for the person to log in or consent. */
  authorizeRequest: (id: string) => ["oauth", "authorize", id] as const,
  /** The state of a login round trip at the identity provider, by hash of the state. */
  login: (stateHash: string) => ["oauth", "login", stateHash] as const,
  /** An authorization code, by hash; and the marker left when it is redeemed. */
  code: (hash: string) => ["oauth", "code", hash] as const,
  usedCode: (hash: string) => ["oauth", "code-used", hash] as const,
  /** A refresh token, by hash; and the marker left when it is rotated away. */
  refresh: (hash: string) => ["oauth", "refresh", hash] as const,
  usedRefresh: (hash: string) => ["oauth", "refresh-used", hash] as const,
  /** A grant: everything issued from one authorization code, revocable as a whole. */
  family: (id: string) => ["oauth", "family", id] as const,
  /** A browser single sign-on session, by hash of its cookie. */
  ssoSession: (hash: string) => ["web", "sso", hash] as const,
  /** A person's approval of a client. */
  consent: (userId: string, clientId: string) => ["web", "consent", userId, clientId] as const,
  /** A person's sealed credential for a service. */
  credential: (userId: string, service: string) =>
    ["credentials", "user", userId, service] as const,
  /** A client session another replica may continue (its backend speaks Streamable HTTP). */
  sharedSession: (sessionId: string) => ["mcp", "session", sessionId] as const,
  /** A service OAuth connection waiting for the service's callback, by hash of its state. */
  serviceConnect: (stateHash: string) => ["credentials", "connect", stateHash] as const,
} as const;
