/**
 * The browser pages for people's own service credentials, which the route table in routes.ts
 * places. Handlers read HTTP and delegate to `web/credential_flow.ts`.
 */
import type { Context } from "hono";
import { parseServerName } from "../core/ids.ts";
import { httpError } from "../mcp/front/http_util.ts";
import type { GatewayEnv } from "./finish.ts";
import { type AuthServer, browserForm } from "./oauth_routes.ts";

type Page = (c: Context<GatewayEnv>) => Response | Promise<Response>;

export interface CredentialPages {
  /** /my/access: the person's grants; and revoking one. */
  access: Page;
  revokeAccess: Page;
  tokens: Page;
  setToken: Page;
  deleteToken: Page;
  services: Page;
  complete: Page;
  connect: Page;
  /** The service's OAuth callback, for the service named by `:service`. */
  callback: Page;
  disconnect: Page;
}

/** Answers every credential path when `oauth:` is not configured, saying what they need. */
export const needsOAuth: Page = () =>
  httpError(404, "not_found", "per-person credentials need oauth: configured on this gateway");

/** The pages, or undefined without `oauth:` (the table then answers with `needsOAuth`). */
export function credentialPages(auth: AuthServer | undefined): CredentialPages | undefined {
  if (!auth) return undefined;
  const flow = auth.credentialFlow;
  return {
    access: (c) => auth.accessFlow.page(c.req.raw),
    revokeAccess: async (c) => auth.accessFlow.revoke(c.req.raw, await browserForm(c.req.raw)),
    tokens: (c) => flow.tokensPage(c.req.raw),
    setToken: async (c) => flow.setToken(c.req.raw, await browserForm(c.req.raw)),
    deleteToken: async (c) => flow.deleteToken(c.req.raw, await browserForm(c.req.raw)),
    services: (c) => flow.servicesStep(c.req.raw),
    complete: (c) => auth.loginFlow.complete(c.req.raw),
    connect: (c) => flow.connect(c.req.raw),
    callback: (c) => {
      const service = parseServerName(c.req.param("service") ?? "");
      if (!service) return httpError(404, "not_found", "no such service");
      return flow.callback(c.req.raw, service);
    },
    disconnect: async (c) => flow.disconnect(c.req.raw, await browserForm(c.req.raw)),
  };
}
