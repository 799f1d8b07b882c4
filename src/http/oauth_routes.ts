/**
 * The authorization server's HTTP surface, registered into the one route table by
 * `buildRoutes`: metadata, registration, client lookup, authorize, consent, the identity
 * provider's callback, token and logout. Handlers parse HTTP and delegate to `oauth/` and `web/`.
 */
import type { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { errorPage } from "../web/pages.ts";
import { RateLimits } from "./rate_limit.ts";
import type { GatewayMetrics } from "../observability/metrics.ts";
import type { ResolvedConfig } from "../config/types.ts";
import { parseClientId, parseServerName, type ServerName } from "../core/ids.ts";
import type { ClientDirectory } from "../oauth/client_directory.ts";
import { publicClientMetadata } from "../oauth/clients.ts";
import { NO_STORE, OAuthError, oauthErrorJson } from "../oauth/errors.ts";
import {
  authorizationServerMetadata,
  gatewayResourceMetadata,
  protectedResourceMetadata,
} from "../oauth/metadata.ts";
import { type Admit, handleTokenRequest, type TokenDeps } from "../oauth/token.ts";
import type { Logger } from "../observability/logger.ts";
import type { CredentialFlow } from "../web/credential_flow.ts";
import type { LoginFlow } from "../web/login_flow.ts";
import { BodyTooLargeError, readBodyLimited } from "../mcp/front/http_util.ts";
import type { GatewayEnv } from "./middleware.ts";

export interface AuthServer {
  issuer: string;
  clients: ClientDirectory;
  loginFlow: LoginFlow;
  credentialFlow: CredentialFlow;
  tokenDeps: TokenDeps;
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
 * Per-address limits on registration, sign-in, callbacks, token (all requests, and failed ones)
 * and the browser pages; registered before the routes so they run first.
 */
export function limitBrowserAndOAuth(app: Hono<GatewayEnv>, limits: RateLimits): void {
  const byAddress = (kind: "oauthPerAddress" | "registerPerAddress", page: boolean) =>
    createMiddleware<GatewayEnv>(async (c, next) => {
      if (c.req.method === "OPTIONS") return await next();
      const wait = limits.take(kind, c.env?.remoteAddress ?? "unknown");
      if (!wait) return await next();
      await c.req.raw.body?.cancel();
      return page
        ? await errorPage(429, "Too many requests", `Wait ${wait} seconds, then try again.`, {
          "retry-after": String(wait),
        })
        : tooManyRequests(wait, `rateLimits.${kind}`);
    });
  app.use("/register", byAddress("registerPerAddress", false));
  app.use("/token", byAddress("oauthPerAddress", false));
  limitTokenFailures(app, limits);
  // A wildcard matches its bare prefix too: "/authorize/*" covers /authorize.
  for (const path of ["/authorize/*", "/oauth/*", "/logout", "/my/*"]) {
    app.use(path, byAddress("oauthPerAddress", true));
  }
}

/**
 * Failed token requests per address: an address past its limit is refused before its request
 * is read. A failure is charged once its answer is known, so a burst sent at once may overrun
 * the limit by the requests in flight; `oauthPerAddress` still bounds those.
 */
function limitTokenFailures(app: Hono<GatewayEnv>, limits: RateLimits): void {
  const kind = "tokenFailuresPerAddress";
  app.use(
    "/token",
    createMiddleware<GatewayEnv>(async (c, next) => {
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
    }),
  );
}

/** Thrown by the token endpoint's `Admit` when a proven client is over `tokenPerClient`. */
class ClientLimited extends Error {
  constructor(readonly wait: number) {
    super(`token requests over rateLimits.tokenPerClient; wait ${wait} s`);
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

export function registerOAuthRoutes(
  root: Hono<GatewayEnv>,
  app: Hono<GatewayEnv>,
  config: ResolvedConfig,
  auth: AuthServer | undefined,
  logger: Logger,
  limits: RateLimits,
  metrics: GatewayMetrics,
): void {
  const basePath = new URL(config.baseUrl).pathname.replace(/\/$/, "");
  const notConfigured = () =>
    json({ error: "not_found", error_description: "OAuth is not configured on this gateway" }, 404);

  const asMetadata = () => auth ? json(authorizationServerMetadata(auth.issuer)) : notConfigured();

  const resourceMetadata = (name: string | undefined) => {
    if (!auth) return notConfigured();
    const server = name ? parseServerName(name) : undefined;
    const config_ = server ? config.servers.get(server) : undefined;
    if (!server || !config_) {
      return json({ error: "not_found", error_description: "no such service" }, 404);
    }
    return json(protectedResourceMetadata(auth.issuer, server as ServerName));
  };

  // RFC 8414 §3 inserts the well-known segment before the issuer's path; clients that append
  // it instead are answered too.
  root.get(`/.well-known/oauth-authorization-server${basePath}`, asMetadata);
  if (basePath) app.get("/.well-known/oauth-authorization-server", asMetadata);

  // RFC 9728: /.well-known/oauth-protected-resource{basePath}/{service}[/mcp|/sse]
  const prm = `/.well-known/oauth-protected-resource${basePath}`;
  root.get(`${prm}/:server`, (c) => resourceMetadata(c.req.param("server")));
  root.get(`${prm}/:server/:endpoint{mcp|sse}`, (c) => resourceMetadata(c.req.param("server")));
  // The base URL's own document names the gateway (RFC 9728 §3.3: `resource` must be the URL
  // the document was found from), so a client that looks there finds the authorization server.
  const gatewayMetadata = () => auth ? json(gatewayResourceMetadata(auth.issuer)) : notConfigured();
  root.get(prm || "/.well-known/oauth-protected-resource", gatewayMetadata);
  if (basePath) {
    app.get("/.well-known/oauth-protected-resource", gatewayMetadata);
    app.get(
      "/.well-known/oauth-protected-resource/:server",
      (c) => resourceMetadata(c.req.param("server")),
    );
  }

  // Preflights for browser-based clients: metadata at the origin root (and the appended form
  // under a base path), registration and token under the base path.
  const preflights = new Set([
    "/.well-known/*",
    ...["/.well-known/*", "/register", "/token"]
      .map((path) => `${basePath}${path}`),
  ]);
  for (const path of preflights) {
    root.options(
      path,
      () => new Response(null, { status: 204, headers: OPEN_CORS }),
    );
  }

  app.post("/register", async (c) => {
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
  });

  app.get("/clients/:clientId", async (c) => {
    if (!auth) return notConfigured();
    const clientId = parseClientId(c.req.param("clientId"));
    const client = clientId && !clientId.startsWith("https:")
      ? await auth.clients.find(clientId)
      : undefined;
    if (!client) return json({ error: "not_found", error_description: "no such client" }, 404);
    return json(publicClientMetadata(client), 200, NO_STORE);
  });

  app.post("/token", async (c) => {
    if (!auth) return notConfigured();
    const authorization = c.req.header("authorization") ?? null;
    // Charged only once the client is proven (see `Admit`): a client_id alone is public, and
    // charging it would let anyone who knows it lock the client out of /token.
    const admit: Admit = (client) => {
      const key = RateLimits.clientKey(client.clientId, c.env?.remoteAddress ?? "unknown");
      const wait = limits.take("tokenPerClient", key);
      if (wait) throw new ClientLimited(wait);
    };
    try {
      const form = await readForm(c.req.raw);
      const response = await handleTokenRequest(form, authorization, auth.tokenDeps, admit);
      metrics.tokensIssued.inc({ grant_type: form.get("grant_type")! });
      return json(response, 200, NO_STORE);
    } catch (error) {
      if (error instanceof ClientLimited) {
        return tooManyRequests(error.wait, "rateLimits.tokenPerClient");
      }
      if (error instanceof OAuthError) {
        metrics.tokenRefusals.inc({ reason: error.code });
        if (error.code !== "invalid_request") {
          logger.info("token refused", { reason: error.code, detail: error.description });
        }
        return withCors(oauthErrorJson(error, authorization !== null));
      }
      throw error;
    }
  });

  app.get("/authorize", (c) => auth ? auth.loginFlow.authorize(c.req.raw) : notConfigured());
  app.post("/authorize/consent", async (c) => {
    if (!auth) return notConfigured();
    return await auth.loginFlow.consent(c.req.raw, await browserForm(c.req.raw));
  });
  app.get("/oauth/callback", (c) => auth ? auth.loginFlow.callback(c.req.raw) : notConfigured());
  app.get("/logout", (c) => auth ? auth.loginFlow.logoutPage(c.req.raw) : notConfigured());
  app.post("/logout", async (c) => {
    if (!auth) return notConfigured();
    return await auth.loginFlow.logout(c.req.raw, await browserForm(c.req.raw));
  });
}

/** A browser form; an unreadable one becomes an empty form, which every check then refuses. */
export async function browserForm(request: Request): Promise<URLSearchParams> {
  try {
    return await readForm(request);
  } catch {
    return new URLSearchParams();
  }
}
