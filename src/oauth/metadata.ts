/** Authorization server metadata (RFC 8414) and protected resource metadata (RFC 9728). */
import type { ServerName } from "../core/ids.ts";
import { serviceUri } from "./services.ts";

/** The one scope Gatehouse grants: use of the service named by the token's audience. */
export const SCOPES_SUPPORTED = ["mcp"] as const;
export const DEFAULT_SCOPE = "mcp";
/** How clients authenticate at /token and /revoke (RFC 6749 §2.3). */
const CLIENT_AUTH_METHODS = ["none", "client_secret_post", "client_secret_basic"] as const;
/** RFC 7523 §2.1, the grant an ID-JAG is presented with. */
export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/** draft-ietf-oauth-identity-assertion-authz-grant: the profile of that grant Gatehouse takes. */
export const ID_JAG_PROFILE = "urn:ietf:params:oauth:grant-profile:id-jag";

/**
 * `idJag`: the jwt-bearer grant is offered (oauth.idJag configured); `privateKeyJwt`: CIMD
 * clients may authenticate with private_key_jwt. Which issuers are trusted is never published.
 */
export interface MetadataOptions {
  idJag?: boolean;
  privateKeyJwt?: boolean;
}

export function authorizationServerMetadata(
  issuer: string,
  options: MetadataOptions = {},
): Record<string, unknown> {
  const authMethods: string[] = [...CLIENT_AUTH_METHODS];
  if (options.privateKeyJwt) authMethods.push("private_key_jwt");
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    // RFC 7009, with client authentication exactly as at the token endpoint.
    revocation_endpoint: `${issuer}/revoke`,
    revocation_endpoint_auth_methods_supported: authMethods,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: [
      "authorization_code",
      "refresh_token",
      ...(options.idJag ? [JWT_BEARER] : []),
    ],
    ...(options.idJag && { authorization_grant_profiles_supported: [ID_JAG_PROFILE] }),
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: authMethods,
    ...(options.privateKeyJwt && {
      token_endpoint_auth_signing_alg_values_supported: ["RS256", "PS256", "ES256", "EdDSA"],
    }),
    scopes_supported: [...SCOPES_SUPPORTED],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${issuer}/`,
  };
}

export function protectedResourceMetadata(
  issuer: string,
  server: ServerName,
  description?: string,
): Record<string, unknown> {
  return {
    resource: serviceUri(issuer, server),
    authorization_servers: [issuer],
    bearer_methods_supported: ["header"],
    scopes_supported: [...SCOPES_SUPPORTED],
    resource_name: description ? `${server}: ${description}` : server,
  };
}

/**
 * The gateway's own resource metadata, served at its base URL's well-known address (RFC 9728
 * §3.1), for clients that look there to find the authorization server. A token still opens
 * one service: `resource` at /authorize names a service, as each service's own document says.
 */
export function gatewayResourceMetadata(issuer: string): Record<string, unknown> {
  return {
    resource: issuer,
    authorization_servers: [issuer],
    bearer_methods_supported: ["header"],
    scopes_supported: [...SCOPES_SUPPORTED],
    resource_name: "Gatehouse",
  };
}

/** The URL of server X's resource metadata, as the 401 challenge advertises it. */
export function resourceMetadataUrl(issuer: string, server: ServerName): string {
  const url = new URL(issuer);
  const basePath = url.pathname.replace(/\/$/, "");
  return `${url.origin}/.well-known/oauth-protected-resource${basePath}/${server}`;
}
