/**
 * Wires identity to backends for the composition root (docs/identity.md): the assertion keys
 * in storage (one set for every replica), the assertions signed with them, what each HTTP
 * backend of a person's session is told, and the person's tokens their backends use.
 */
import type { HttpServerConfig, ResolvedConfig, ServerConfig } from "./config/types.ts";
import { compileGlobs } from "./policy/glob.ts";
import type { Clock } from "./core/clock.ts";
import type { Principal } from "./core/principal.ts";
import { AssertionKeys } from "./credentials/assertion_keys.ts";
import { type Caller, IdentityAssertions, identitySource } from "./credentials/identity.ts";
import type { BackendOptions, PersonTokens } from "./mcp/backends/connect.ts";
import type { UserCredentials } from "./credentials/user_credentials.ts";
import type { TokenExchange } from "./credentials/idp_exchange.ts";
import type { ServerName } from "./core/ids.ts";
import type { Store } from "./store/store.ts";

export interface BackendIdentity {
  keys: AssertionKeys;
  /** What the backends of `principal`'s session are told (BackendOptions.identity). */
  forPrincipal(principal: Principal): NonNullable<BackendOptions["identity"]>;
}

export function createBackendIdentity(
  config: ResolvedConfig,
  deps: { store: Store; clock: Clock },
  sealKeys: CryptoKey[],
): BackendIdentity {
  const keys = new AssertionKeys({ store: deps.store, clock: deps.clock, sealKeys });
  const assertions = new IdentityAssertions({
    issuer: config.baseUrl,
    keys,
    clock: deps.clock,
  });
  return {
    keys,
    forPrincipal(principal) {
      const caller: Caller = {
        id: principal.id,
        email: principal.email,
        groups: principal.allGroups ?? principal.groups ?? [],
        clientId: principal.clientId,
      };
      return (server) => identitySource(server, toldOf(server, caller), assertions);
    },
  };
}

/** Each `identity.groups` list, compiled once (the lists live as long as their configuration). */
const compiledGroups = new WeakMap<readonly string[], RegExp | undefined>();

/**
 * `caller` as `server`'s backend is told of them: only the groups its `identity.groups`
 * patterns match (all when it has none; none for an empty list), so a person with hundreds of
 * groups still fits a backend's header limit.
 */
export function toldOf(server: HttpServerConfig, caller: Caller): Caller {
  const patterns = server.identity.groups;
  if (patterns === undefined) return caller;
  if (!compiledGroups.has(patterns)) compiledGroups.set(patterns, compileGlobs(patterns));
  const match = compiledGroups.get(patterns);
  return { ...caller, groups: match ? caller.groups.filter((group) => match.test(group)) : [] };
}

/**
 * One person's credentials as their sessions' backends use them: those they gave (pasted, or an
 * account connected), and for `kind: exchange` the company identity provider's token for the
 * backend. A backend that refuses an exchanged token gets one newly asked for, once.
 */
export function personTokens(
  parts: { credentials: UserCredentials; exchange: TokenExchange },
  servers: ResolvedConfig["servers"],
  user: string,
): PersonTokens {
  const { credentials, exchange } = parts;
  const exchanged = (server: string) => {
    const spec = servers.get(server as ServerName)?.userToken;
    return spec?.kind === "exchange" ? spec : undefined;
  };
  return {
    tokenFor: (server) => {
      const spec = exchanged(server);
      return spec ? exchange.tokenFor(user, server, spec) : credentials.tokenFor(user, server);
    },
    rejected: async (server, token, refusal) => {
      const spec = exchanged(server);
      if (!spec) return await credentials.rejected(user, server, token, refusal);
      if (refusal.retried) return undefined;
      exchange.forget(user, server);
      const next = await exchange.tokenFor(user, server, spec);
      return next === token ? undefined : next;
    },
    watch: (listener) =>
      credentials.onChange((changedUser, server) => {
        if (changedUser === user) listener(server);
      }),
  };
}

/**
 * Whether `server`'s backend, or one of an aggregate's members, is told which client calls: a
 * 2026 client's links to it are then per client (stateless_links.ts), so each is named rightly.
 */
export function tellsClient(server: ServerConfig, servers: ResolvedConfig["servers"]): boolean {
  const told = (one: ServerConfig | undefined) =>
    one !== undefined && one.transport !== "stdio" && one.transport !== "aggregate" &&
    (one.identity.headers || one.identity.assertion);
  return server.transport === "aggregate"
    ? server.members.some((member) => told(servers.get(member)))
    : told(server);
}
