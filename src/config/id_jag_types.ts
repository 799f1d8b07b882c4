/** The resolved types of `oauth.idJag` and `oauth.clients` (oauth_id_jag.ts reads them). */
import type { Secret } from "../core/secret.ts";

/** Issuers compared as strings with an ID-JAG's `iss`; longer-lived ID-JAGs are refused. */
export type IdJagConfig = { issuers: string[]; maxLifetimeMs: number };

/** A confidential client from `oauth.clients`: it uses the jwt-bearer grant only. */
export interface ConfiguredClient {
  id: string;
  secret: Secret;
  name?: string;
  authMethod: "client_secret_basic" | "client_secret_post";
}

/** What `oauth:` holds for enterprise-managed authorization (OAuthConfig extends it). */
export interface EnterpriseOAuth {
  /** `oauth.idJag`: the jwt-bearer grant for ID-JAGs; absent when not configured. */
  idJag?: IdJagConfig;
  /** `oauth.clients`: confidential clients the operator configures. */
  clients: ConfiguredClient[];
}
