/**
 * The browser pages for people's own service credentials, registered into the one route
 * table by `buildRoutes`. Handlers read HTTP and delegate to `web/credential_flow.ts`.
 */
import type { Hono } from "hono";
import { parseServerName } from "../core/ids.ts";
import { httpError } from "../mcp/front/http_util.ts";
import type { GatewayEnv } from "./middleware.ts";
import { type AuthServer, browserForm } from "./oauth_routes.ts";

export function registerCredentialRoutes(
  app: Hono<GatewayEnv>,
  auth: AuthServer | undefined,
): void {
  if (!auth) {
    const notConfigured = () =>
      httpError(404, "not_found", "per-person credentials need oauth: configured on this gateway");
    for (const path of ["/my/tokens", "/my/tokens/*", "/oauth/services", "/oauth/complete"]) {
      app.all(path, notConfigured);
    }
    for (const path of ["/oauth/connect", "/oauth/callback/:service", "/oauth/disconnect"]) {
      app.all(path, notConfigured);
    }
    return;
  }
  const flow = auth.credentialFlow;
  app.get("/my/tokens", (c) => flow.tokensPage(c.req.raw));
  app.post("/my/tokens/set", async (c) => flow.setToken(c.req.raw, await browserForm(c.req.raw)));
  app.post(
    "/my/tokens/delete",
    async (c) => flow.deleteToken(c.req.raw, await browserForm(c.req.raw)),
  );
  app.get("/oauth/services", (c) => flow.servicesStep(c.req.raw));
  app.get("/oauth/complete", (c) => auth.loginFlow.complete(c.req.raw));
  app.get("/oauth/connect", (c) => flow.connect(c.req.raw));
  app.get("/oauth/callback/:service", (c) => {
    const service = parseServerName(c.req.param("service"));
    if (!service) return httpError(404, "not_found", "no such service");
    return flow.callback(c.req.raw, service);
  });
  app.post(
    "/oauth/disconnect",
    async (c) => flow.disconnect(c.req.raw, await browserForm(c.req.raw)),
  );
}
