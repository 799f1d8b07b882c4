/**
 * The schema of `oauth:`: the company identity provider people sign in with, who may sign in,
 * token and session lifetimes, and which clients may register. Mirrors oauth.ts.
 */
import { duration, flag, type JsonSchema, list, size, text } from "./schema_builders.ts";

export const OAUTH_SCHEMA: JsonSchema = {
  type: "object",
  additionalProperties: false,
  required: ["idp"],
  description:
    "The OAuth 2.1 authorization server: people sign in with the company identity provider and clients get tokens for one server each.",
  properties: {
    idp: {
      type: "object",
      additionalProperties: false,
      required: ["provider", "clientId", "clientSecret"],
      description: "The company identity provider people sign in with.",
      properties: {
        provider: {
          enum: ["oidc", "google", "azure", "github"],
          description: "oidc (Okta, Keycloak, Auth0, …), google, azure (Entra ID) or github.",
        },
        issuer: text("With provider oidc: the issuer URL; its metadata is discovered.", {
          examples: ["https://login.example.com/realms/staff"],
        }),
        tenant: text(
          "With provider azure: your tenant id or domain (common, organizations and consumers are refused).",
        ),
        clientId: text("Gatehouse's client id at the identity provider."),
        clientSecret: text("Gatehouse's client secret there.", {
          examples: ["${IDP_CLIENT_SECRET}"],
        }),
        scopes: list(
          "Scopes to ask for (default: openid email profile; GitHub: read:user user:email read:org).",
        ),
        groupsClaim: text(
          "With provider oidc or azure: the ID-token or userinfo claim listing the person's groups (Keycloak, Okta: groups; Entra ID: groups, or roles for app roles). Refused for google (it names no groups) and github (organisations and teams are the groups).",
          { examples: ["groups"] },
        ),
        githubUrl: text("With provider github: GitHub Enterprise's URL.", {
          default: "https://github.com",
        }),
        githubApiUrl: text("With provider github: GitHub Enterprise's API URL.", {
          default: "https://api.github.com",
        }),
      },
    },
    allow: {
      type: "object",
      additionalProperties: false,
      description:
        "Who may sign in: any one rule admits. Addresses the provider has not verified count for nothing.",
      properties: {
        domains: list("Email domains.", { examples: [["example.com"]] }),
        emails: list("Email addresses."),
        orgs: list("GitHub organisations (provider github)."),
        groups: list(
          "Groups named at sign-in: the groupsClaim of oidc and azure (compared exactly), GitHub's org and org/team-slug (lower-cased). Google names none.",
          { examples: [["staff", "acme/platform"]] },
        ),
        anyone: flag("Anyone the identity provider signs in (only for a private IdP).", false),
      },
    },
    accessTokenTtl: duration("Lifetime of access tokens.", "1h"),
    refreshTokenTtl: duration("Lifetime of refresh tokens (rotated on each use).", "30d"),
    authorizationCodeTtl: duration("Lifetime of authorization codes.", "1m"),
    authorizationRequestTtl: duration("How long a sign-in may take.", "10m"),
    unusedClientTtl: duration(
      "A registered client that never gets a token is forgotten after this long.",
      "24h",
    ),
    ssoSessionTtl: duration("How long a browser sign-in lasts.", "12h"),
    groupsMaxAge: duration(
      "How old the person's groups (and GitHub organisations) may be when tokens are issued: older ones are read again from the identity provider, with the provider's tokens kept from the sign-in; a person the provider no longer knows loses the grant.",
      "1h",
    ),
    clientMetadataDocuments: {
      type: "object",
      additionalProperties: false,
      description: "Clients identified by an https URL (client ID metadata documents).",
      properties: {
        enabled: flag("Accept them.", true),
        allowPrivateHosts: list(
          "Hosts that may resolve to private addresses (otherwise refused against SSRF).",
        ),
        timeout: duration("Time to fetch a document.", "5s"),
        maxBytes: size("Largest document.", "64KiB"),
      },
    },
    redirectSchemes: list(
      "Private-use URI schemes native apps may redirect to (loopback http is always allowed).",
      { examples: [["cursor", "vscode"]] },
    ),
    idJag: {
      description:
        "Enterprise-managed authorization: the token endpoint takes ID-JAGs (the jwt-bearer grant) signed by these issuers. true trusts oauth.idp's issuer. See docs/enterprise-authorization.md.",
      oneOf: [
        { type: "boolean" },
        {
          type: "object",
          additionalProperties: false,
          required: ["issuers"],
          properties: {
            issuers: list(
              "Trusted ID-JAG issuers, exactly as their iss claim says; keys from each one's discovery jwks_uri.",
              { examples: [["https://login.example.com"]] },
            ),
            maxLifetime: duration("ID-JAGs living longer (exp - iat) are refused.", "10m"),
          },
        },
      ],
    },
    clients: {
      type: "array",
      description:
        "Confidential clients configured here rather than registered: they use the jwt-bearer grant (ID-JAGs) only.",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["id", "secret"],
        properties: {
          id: text("The client's id: letters, digits, . _ -; not starting with gh_.", {
            examples: ["chat-app"],
          }),
          secret: text("Its secret, at least 32 characters; kept only as a hash.", {
            examples: ["${CHAT_APP_SECRET}"],
          }),
          name: text("A name shown in grant listings."),
          authMethod: {
            enum: ["client_secret_basic", "client_secret_post"],
            default: "client_secret_basic",
            description: "How it authenticates at /token.",
          },
        },
      },
    },
  },
};
