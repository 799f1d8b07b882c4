/**
 * The authorization server's HTTP handlers, which the route table in routes.ts places:
 * metadata, registration, client lookup, authorize, consent, the identity provider's callback,
 * token and logout, and the per-address limits on them. Handlers parse HTTP and delegate to
 * `oauth/` and `web/`.
 */
import { GatehouseError } from "../core/errors.ts";
import type { Context, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { errorPage } from "../web/pages.ts";
import { RateLimits } from "./rate_limit.ts";
import type { GatewayMetrics } from "../observability/metrics.ts";
import { noteOnHttpSpan } from "../observability/tracing.ts";
import type { ResolvedConfig } from "../config/types.ts";
import { parseClientId, parseServerName, type ServerName } from "../core/ids.ts";
import type { ClientDirectory } from "../oauth/client_directory.ts";
import { publicClientMetadata } from "../oauth/clients.ts";
import { NO_STORE, OAuthError, oauthErrorJson } from "../oauth/errors.ts";
import {
  authorizationServerMetadata,
  gatewayResourceMetadata,
  type MetadataOptions,
  protectedResourceMetadata,
} from "../oauth/metadata.ts";
import { type Admit, handleTokenRequest, type TokenDeps } from "../oauth/token.ts";
import { handleRevocationRequest, type RevocationDeps } from "../oauth/revoke.ts";
import type { Logger } from "../observability/logger.ts";
import type { SsoSessions } from "../web/sso.ts";
import type { AccessFlow } from "../web/access_flow.ts";
import type { CredentialFlow } from "../web/credential_flow.ts";
import type { LoginFlow } from "../web/login_flow.ts";
import { BodyTooLargeError, readBodyLimited } from "../mcp/front/http_util.ts";
import type { GatewayEnv } from "./finish.ts";

export interface AuthServer {
  issuer: string;
  /** What the RFC 8414 document offers besides the code flow (the jwt-bearer grant). */
  metadata: MetadataOptions;
  clients: ClientDirectory;
  loginFlow: LoginFlow;
  credentialFlow: CredentialFlow;
  tokenDeps: TokenDeps;
  revocationDeps: RevocationDeps;
  /** /my/access: a person's grants, and revoking them. */
  accessFlow: AccessFlow;
  /** The browser's single sign-on sessions (the approval pages sign people in with them). */
  sso: SsoSessions;
}

const MAX_REGISTRATION_BYTES = 16 * 1024;
const MAX_FORM_BYTES = 64 * 1024;

/** Public, credential-free endpoints that browser-based clients (MCP Inspector) call. */
const OPEN_CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "authorization, content-type, mcp-protocol-version",
  "access-control-max-age": "600",
};

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...OPEN_CORS, ...headers },
  });
}

function withCors(response: Response): Response {
  for (const [name, value] of Object.entries(OPEN_CORS)) response.headers.set(name, value);
  return response;
}

async function readForm(request: Request): Promise<URLSearchParams> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    await request.body?.cancel();
    throw new OAuthError("invalid_request", "the body must be application/x-www-form-urlencoded");
  }
  try {
    return new URLSearchParams(await readBodyLimited(request, MAX_FORM_BYTES));
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      throw new OAuthError("invalid_request", `the body is larger than ${MAX_FORM_BYTES} bytes`);
    }
    throw new OAuthError("invalid_request", "the body is not valid UTF-8");
  }
}

/**
 * The per-address limits, as middleware for the rows they guard: `registerPerAddress`,
 * `oauthPerAddress` (token; and browser, which answers with an HTML 429) and
 * `tokenFailuresPerAddress` (see `limitTokenFailures`).
 */
export interface OAuthLimits {
  register: MiddlewareHandler<GatewayEnv>;
  token: MiddlewareHandler<GatewayEnv>;
  tokenFailures: MiddlewareHandler<GatewayEnv>;
  browser: MiddlewareHandler<GatewayEnv>;
}

/**
 * Which of an address's `oauthPerAddress` buckets a browser request draws on: /authorize (and
 * its consent) apart from the identity provider's callbacks and the person's own pages, and all
 * three apart from the token endpoint. Anyone can send /authorize links; spending one address's
 * budget on them must not lock out the sign-ins, tokens and pages of everyone behind it.
 */
export function browserBucket(path: string): "authorize" | "callback" | "pages" {
  if (/\/authorize(\/consent)?$/.test(path)) return "authorize";
  if (/\/oauth\/callback(\/[^/]*)?$/.test(path)) return "callback";
  return "pages";
}

/** Per-address limits on registration, sign-in, callbacks, token and the browser pages. */
export function oauthLimits(limits: RateLimits): OAuthLimits {
  const byAddress = (
    kind: "oauthPerAddress" | "registerPerAddress",
    page: boolean,
    bucket: (path: string) => string,
  ) =>
    createMiddleware<GatewayEnv>(async (c, next) => {
      if (c.req.method === "OPTIONS") return await next();
      const address = c.env?.remoteAddress ?? "unknown";
      const wait = limits.take(kind, `${bucket(c.req.path)} ${address}`);
      if (!wait) return await next();
      await c.req.raw.body?.cancel();
      return page
        ? await errorPage(429, "Too many requests", `Wait ${wait} seconds, then try again.`, {
          "retry-after": String(wait),
        })
        : tooManyRequests(wait, `rateLimits.${kind}`);
    });
  return {
    register: byAddress("registerPerAddress", false, () => "register"),
    token: byAddress("oauthPerAddress", false, () => "token"),
    tokenFailures: limitTokenFailures(limits),
    browser: byAddress("oauthPerAddress", true, browserBucket),
  };
}

/**
 * Failed token requests per address: an address past its limit is refused before its request
 * is read. A failure is charged once its answer is known, so a burst sent at once may overrun
 * the limit by the requests in flight; `oauthPerAddress` still bounds those.
 */
function limitTokenFailures(limits: RateLimits): MiddlewareHandler<GatewayEnv> {
  const kind = "tokenFailuresPerAddress";
  return createMiddleware<GatewayEnv>(async (c, next) => {
    if (c.req.method !== "POST") return await next();
    const address = c.env?.remoteAddress ?? "unknown";
    const wait = limits.wait(kind, address);
    if (wait) {
      await c.req.raw.body?.cancel();
      return tooManyRequests(wait, `rateLimits.${kind}`);
    }
    await next();
    // Refusals the client earned (4xx), not the gateway's own failures or its 429s.
    if (c.res.status >= 400 && c.res.status < 500 && c.res.status !== 429) {
      limits.charge(kind, address);
    }
  });
}

/** Thrown by the token endpoint's `Admit` when a proven client is over `tokenPerClient`. */
class ClientLimited extends GatehouseError<"client_rate_limited"> {
  constructor(readonly wait: number) {
    super("client_rate_limited", `token requests over rateLimits.tokenPerClient; wait ${wait} s`);
  }
}

/** 429 in the OAuth error shape, for clients that read JSON. */
function tooManyRequests(wait: number, limit: string): Response {
  return json(
    {
      error: "temporarily_unavailable",
      error_description: `too many requests; try again in ${wait} s (limit: ${limit})`,
    },
    429,
    { ...NO_STORE, "retry-after": String(wait) },
  );
}

type Endpoint = (c: Context<GatewayEnv>) => Response | Promise<Response>;

/** The authorization server's endpoints; each answers 404 JSON when `oauth:` is not configured. */
export function oauthEndpoints(
  config: ResolvedConfig,
  auth: AuthServer | undefined,
  logger: Logger,
  limits: RateLimits,
  metrics: GatewayMetrics,
) {
  const notConfigured = () =>
    json({ error: "not_found", error_description: "OAuth is not configured on this gateway" }, 404);

  const resourceMetadata = (name: string | undefined) => {
    if (!auth) return notConfigured();
    const server = name ? parseServerName(name) : undefined;
    const config_ = server ? config.servers.get(server) : undefined;
    if (!server || !config_) {
      return json({ error: "not_found", error_description: "no such service" }, 404);
    }
    return json(protectedResourceMetadata(auth.issuer, server as ServerName));
  };

  const register: Endpoint = async (c) => {
    if (!auth) return notConfigured();
    try {
      const type = c.req.header("content-type") ?? "";
      if (!/^application\/json\b/i.test(type)) {
        await c.req.raw.body?.cancel();
        throw new OAuthError("invalid_client_metadata", "the body must be application/json");
      }
      let body: unknown;
      try {
        body = JSON.parse(await readBodyLimited(c.req.raw, MAX_REGISTRATION_BYTES));
      } catch (error) {
        throw new OAuthError(
          "invalid_client_metadata",
          error instanceof BodyTooLargeError
            ? `the registration request is larger than ${MAX_REGISTRATION_BYTES} bytes`
            : "the body is not valid JSON",
        );
      }
      const { client, secret } = await auth.clients.register(body);
      logger.info("client registered", {
        clientId: client.clientId,
        clientName: client.clientName,
      });
      return json(
        {
          ...publicClientMetadata(client),
          ...(secret !== undefined && { client_secret: secret, client_secret_expires_at: 0 }),
        },
        201,
        NO_STORE,
      );
    } catch (error) {
      if (error instanceof OAuthError) return withCors(oauthErrorJson(error));
      throw error;
    }
  };

  // Charged only once the client is proven (see `Admit`): a client_id alone is public, and
  // charging it would let anyone who knows it lock the client out of /token.
  const admitFor = (c: Context<GatewayEnv>): Admit => (client) => {
    const key = RateLimits.clientKey(client.clientId, c.env?.remoteAddress ?? "unknown");
    const wait = limits.take("tokenPerClient", key);
    if (wait) throw new ClientLimited(wait);
  };

  const token: Endpoint = async (c) => {
    if (!auth) return notConfigured();
    const authorization = c.req.header("authorization") ?? null;
    const admit = admitFor(c);
    try {
      const form = await readForm(c.req.raw);
      const response = await handleTokenRequest(form, authorization, auth.tokenDeps, admit);
      metrics.tokensIssued.inc({ grant_type: form.get("grant_type")! });
      noteOnHttpSpan("gatehouse.oauth.grant_type", form.get("grant_type")!);
      return json(response, 200, NO_STORE);
    } catch (error) {
      if (error instanceof ClientLimited) {
        return tooManyRequests(error.wait, "rateLimits.tokenPerClient");
      }
      if (error instanceof OAuthError) {
        metrics.tokenRefusals.inc({ reason: error.code });
        noteOnHttpSpan("gatehouse.oauth.error", error.code);
        if (error.code !== "invalid_request") {
          logger.info("token refused", {
            reason: error.code,
            detail: error.description,
            ...(error.logDetail !== undefined && { cause: error.logDetail }),
          });
        }
        return withCors(oauthErrorJson(error, authorization !== null));
      }
      throw error;
    }
  };

  /** RFC 7009: 200 with an empty body whether or not there was anything to revoke. */
  const revoke: Endpoint = async (c) => {
    if (!auth) return notConfigured();
    const authorization = c.req.header("authorization") ?? null;
    try {
      const form = await readForm(c.req.raw);
      const { revoked } = await handleRevocationRequest(
        form,
        authorization,
        auth.revocationDeps,
        admitFor(c),
      );
      if (revoked) logger.info("grant revoked", { grant: revoked, by: "client" });
      return json({}, 200, NO_STORE);
    } catch (error) {
      if (error instanceof ClientLimited) {
        return tooManyRequests(error.wait, "rateLimits.tokenPerClient");
      }
      if (error instanceof OAuthError) {
        return withCors(oauthErrorJson(error, authorization !== null));
      }
      throw error;
    }
  };

  return {
    /** RFC 8414 authorization server metadata. */
    serverMetadata: () =>
      auth ? json(authorizationServerMetadata(auth.issuer, auth.metadata)) : notConfigured(),
    /** RFC 9728 metadata of the service named by `:server`. */
    resourceMetadata: (c) => resourceMetadata(c.req.param("server")),
    // RFC 9728 §3.3: `resource` must be the URL the document was found from, so the base URL's
    // own document names the gateway, and a client that looks there finds the authorization
    // server.
    gatewayMetadata: () => auth ? json(gatewayResourceMetadata(auth.issuer)) : notConfigured(),
    /** 204 with open CORS, for browser-based clients (MCP Inspector). */
    preflight: () => new Response(null, { status: 204, headers: OPEN_CORS }),
    register,
    client: async (c) => {
      if (!auth) return notConfigured();
      const clientId = parseClientId(c.req.param("clientId"));
      const client = clientId && !clientId.startsWith("https:")
        ? await auth.clients.find(clientId)
        : undefined;
      if (!client) return json({ error: "not_found", error_description: "no such client" }, 404);
      return json(publicClientMetadata(client), 200, NO_STORE);
    },
    token,
    revoke,
    authorize: (c) => auth ? auth.loginFlow.authorize(c.req.raw) : notConfigured(),
    consent: async (c) => {
      if (!auth) return notConfigured();
      return await auth.loginFlow.consent(c.req.raw, await browserForm(c.req.raw));
    },
    callback: (c) => auth ? auth.loginFlow.callback(c.req.raw) : notConfigured(),
    logoutPage: (c) => auth ? auth.loginFlow.logoutPage(c.req.raw) : notConfigured(),
    logout: async (c) => {
      if (!auth) return notConfigured();
      return await auth.loginFlow.logout(c.req.raw, await browserForm(c.req.raw));
    },
  } satisfies Record<string, Endpoint>;
}

/** A browser form; an unreadable one becomes an empty form, which every check then refuses. */
export async function browserForm(request: Request): Promise<URLSearchParams> {
  try {
    return await readForm(request);
  } catch {
    return new URLSearchParams();
  }
}
