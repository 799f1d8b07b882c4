/** The `oauth:` section: token lifetimes, the company identity provider and the access policy. */
import { Secret } from "../core/secret.ts";
import { Checker, describe } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import { parseConfiguredClients, parseIdJag } from "./oauth_id_jag.ts";
import type {
  AccessPolicy,
  ClientMetadataDocumentsConfig,
  IdpConfig,
  IdpProvider,
  OAuthConfig,
} from "./types.ts";

export const OAUTH_DEFAULTS = {
  accessTokenTtlMs: 60 * 60_000,
  refreshTokenTtlMs: 30 * 24 * 60 * 60_000,
  authorizationCodeTtlMs: 60_000,
  authorizationRequestTtlMs: 10 * 60_000,
  unusedClientTtlMs: 24 * 60 * 60_000,
  ssoSessionTtlMs: 12 * 60 * 60_000,
  groupsMaxAgeMs: 60 * 60_000,
};

const OAUTH_KEYS = [
  "accessTokenTtl",
  "refreshTokenTtl",
  "authorizationCodeTtl",
  "authorizationRequestTtl",
  "unusedClientTtl",
  "ssoSessionTtl",
  "groupsMaxAge",
  "idp",
  "allow",
  "clientMetadataDocuments",
  "redirectSchemes",
  "idJag",
  "clients",
];
/** Schemes that must never receive an authorization code. */
const FORBIDDEN_SCHEMES = [
  "http",
  "https",
  "javascript",
  "data",
  "file",
  "vbscript",
  "blob",
  "about",
  "ftp",
  "ws",
  "wss",
];
const IDP_KEYS = [
  "provider",
  "issuer",
  "tenant",
  "clientId",
  "clientSecret",
  "scopes",
  "groupsClaim",
  "githubUrl",
  "githubApiUrl",
];
const PROVIDERS: IdpProvider[] = ["oidc", "google", "azure", "github"];
const DEFAULT_SCOPES: Record<IdpProvider, string[]> = {
  oidc: ["openid", "email", "profile"],
  google: ["openid", "email", "profile"],
  azure: ["openid", "email", "profile"],
  github: ["read:user", "user:email", "read:org"],
};

/** An https URL without trailing slashes (issuers are compared as strings). */
function parseHttpsUrl(c: Checker, value: unknown, path: ConfigPath): string | undefined {
  return c.httpsUrl(value, path)?.replace(/\/+$/, "");
}

function parseIdp(c: Checker, value: unknown): IdpConfig {
  const path: ConfigPath = ["oauth", "idp"];
  const raw = value === undefined
    ? (c.fail(path, "is required", "say which identity provider people log in with"), {})
    : c.object(value, path, IDP_KEYS) ?? {};
  const provider = (PROVIDERS as unknown[]).includes(raw.provider)
    ? raw.provider as IdpProvider
    : (c.fail(
      [...path, "provider"],
      raw.provider === undefined ? "is required" : `unknown provider ${describe(raw.provider)}`,
      `one of: ${PROVIDERS.join(", ")}`,
    ),
      "oidc");
  let issuer: string | undefined;
  let tenant: string | undefined;
  if (provider === "oidc") {
    issuer = parseHttpsUrl(c, raw.issuer, [...path, "issuer"]);
  } else if (provider === "google") {
    issuer = "https://accounts.google.com";
  } else if (provider === "azure") {
    tenant = c.string(raw.tenant, [...path, "tenant"], "your Entra tenant id or domain");
    if (tenant !== undefined && !/^[A-Za-z0-9.-]+$/.test(tenant)) {
      c.fail([...path, "tenant"], `not a tenant id or domain: ${describe(tenant)}`);
    } else if (["common", "organizations", "consumers"].includes(tenant?.toLowerCase() ?? "")) {
      c.fail(
        [...path, "tenant"],
        `"${tenant}" admits accounts from any tenant`,
        "name your own tenant id, so that only your directory's accounts can log in",
      );
    }
    issuer = `https://login.microsoftonline.com/${tenant ?? "invalid"}/v2.0`;
  }
  if (provider !== "oidc" && raw.issuer !== undefined) {
    c.fail([...path, "issuer"], `is not used with provider ${provider}`, "remove it");
  }
  const secret = c.string(raw.clientSecret, [...path, "clientSecret"], "e.g. ${IDP_CLIENT_SECRET}");
  const scopes = raw.scopes === undefined
    ? DEFAULT_SCOPES[provider]
    : c.stringList(raw.scopes, [...path, "scopes"]);
  if (provider !== "github" && !scopes.includes("openid")) {
    c.fail(
      [...path, "scopes"],
      'must include "openid"',
      "OpenID Connect needs it to log people in",
    );
  }
  return {
    provider,
    issuer,
    tenant,
    clientId: c.string(raw.clientId, [...path, "clientId"]) ?? "",
    clientSecret: new Secret(secret ?? ""),
    scopes,
    ...parseGroupsClaim(c, raw.groupsClaim, provider),
    githubUrl: raw.githubUrl === undefined
      ? "https://github.com"
      : parseHttpsUrl(c, raw.githubUrl, [...path, "githubUrl"]) ?? "",
    githubApiUrl: raw.githubApiUrl === undefined
      ? "https://api.github.com"
      : parseHttpsUrl(c, raw.githubApiUrl, [...path, "githubApiUrl"]) ?? "",
  };
}

/** `idp.groupsClaim`: which claim names the person's groups; oidc and azure only. */
function parseGroupsClaim(
  c: Checker,
  value: unknown,
  provider: IdpProvider,
): Pick<IdpConfig, "groupsClaim"> {
  const path: ConfigPath = ["oauth", "idp", "groupsClaim"];
  if (value === undefined) return {};
  const claim = c.string(value, path, "the claim listing the person's groups, e.g. groups");
  if (provider === "github") {
    c.fail(
      path,
      "is not used with provider github",
      "GitHub's organisations and teams are the groups (org and org/team-slug); remove groupsClaim",
    );
  } else if (provider === "google") {
    c.fail(
      path,
      "Google's sign-in names no groups",
      "admit people by domains or emails, or sign in through an oidc provider that emits groups (Keycloak, Okta, Entra ID)",
    );
  }
  return claim === undefined ? {} : { groupsClaim: claim };
}

function parsePolicy(c: Checker, value: unknown, idp: IdpConfig): AccessPolicy {
  const path: ConfigPath = ["oauth", "allow"];
  const provider = idp.provider;
  const raw = c.object(value, path, ["domains", "emails", "orgs", "groups", "anyone"]) ?? {};
  const lower = (list: string[]) => list.map((item) => item.trim().toLowerCase());
  const groups = c.stringList(raw.groups, [...path, "groups"]).map((group) => group.trim());
  const policy: AccessPolicy = {
    domains: lower(c.stringList(raw.domains, [...path, "domains"])),
    emails: lower(c.stringList(raw.emails, [...path, "emails"])),
    orgs: lower(c.stringList(raw.orgs, [...path, "orgs"])),
    // GitHub compares organisation logins and team slugs without regard to case; OIDC
    // providers may not, so their group names are kept as written.
    groups: provider === "github" ? lower(groups) : groups,
    anyone: c.boolean(raw.anyone, [...path, "anyone"], false),
  };
  checkPolicyGroups(c, policy.groups, idp);
  policy.domains.forEach((domain, i) => {
    if (!/^[a-z0-9.-]+\.[a-z]{2,}$/.test(domain)) {
      c.fail([...path, "domains", i], `not a domain: ${describe(domain)}`, 'e.g. "example.com"');
    }
  });
  policy.emails.forEach((email, i) => {
    if (!/^[^@\s]+@[^@\s]+$/.test(email)) {
      c.fail([...path, "emails", i], `not an email address: ${describe(email)}`);
    }
  });
  if (policy.orgs.length > 0 && provider !== "github") {
    c.fail([...path, "orgs"], "organisations are checked with provider github only");
  }
  const empty = !policy.domains.length && !policy.emails.length && !policy.orgs.length &&
    !policy.groups.length;
  if (empty && !policy.anyone) {
    c.fail(
      path,
      "admits nobody",
      "list domains, emails, groups or (github) orgs; or say anyone: true to admit every account the provider authenticates",
    );
  }
  return policy;
}

/** `allow.groups` that could never match: the provider names no groups. */
function checkPolicyGroups(c: Checker, groups: string[], idp: IdpConfig): void {
  const path: ConfigPath = ["oauth", "allow", "groups"];
  groups.forEach((group, i) => {
    if (group === "") c.fail([...path, i], "is empty", "give a group name");
  });
  if (groups.length === 0) return;
  if (idp.provider === "google") {
    c.fail(
      path,
      "Google names no groups at sign-in",
      "admit your Workspace domain with domains, or people with emails",
    );
  } else if (idp.provider !== "github" && idp.groupsClaim === undefined) {
    c.fail(
      path,
      "no groups reach the gateway without oauth.idp.groupsClaim",
      "set oauth.idp.groupsClaim to the claim that lists the person's groups (e.g. groups)",
    );
  }
}

function parseCimd(c: Checker, value: unknown): ClientMetadataDocumentsConfig {
  const path: ConfigPath = ["oauth", "clientMetadataDocuments"];
  const raw = c.object(value, path, ["enabled", "allowPrivateHosts", "timeout", "maxBytes"]) ?? {};
  return {
    enabled: c.boolean(raw.enabled, [...path, "enabled"], true),
    allowPrivateHosts: c.stringList(raw.allowPrivateHosts, [...path, "allowPrivateHosts"])
      .map((host) => host.toLowerCase()),
    timeoutMs: c.duration(raw.timeout, [...path, "timeout"], 5_000),
    maxBytes: c.size(raw.maxBytes, [...path, "maxBytes"], 64 * 1024),
  };
}

export function parseOAuth(c: Checker, value: unknown): OAuthConfig | undefined {
  if (value === undefined || value === null) return undefined;
  const raw = c.object(value, ["oauth"], OAUTH_KEYS);
  if (!raw) return undefined;
  const at = (key: string): ConfigPath => ["oauth", key];
  const idp = parseIdp(c, raw.idp);
  return {
    accessTokenTtlMs: c.duration(
      raw.accessTokenTtl,
      at("accessTokenTtl"),
      OAUTH_DEFAULTS.accessTokenTtlMs,
    ),
    refreshTokenTtlMs: c.duration(
      raw.refreshTokenTtl,
      at("refreshTokenTtl"),
      OAUTH_DEFAULTS.refreshTokenTtlMs,
    ),
    authorizationCodeTtlMs: c.duration(
      raw.authorizationCodeTtl,
      at("authorizationCodeTtl"),
      OAUTH_DEFAULTS.authorizationCodeTtlMs,
    ),
    authorizationRequestTtlMs: c.duration(
      raw.authorizationRequestTtl,
      at("authorizationRequestTtl"),
      OAUTH_DEFAULTS.authorizationRequestTtlMs,
    ),
    unusedClientTtlMs: c.duration(
      raw.unusedClientTtl,
      at("unusedClientTtl"),
      OAUTH_DEFAULTS.unusedClientTtlMs,
    ),
    ssoSessionTtlMs: c.duration(
      raw.ssoSessionTtl,
      at("ssoSessionTtl"),
      OAUTH_DEFAULTS.ssoSessionTtlMs,
    ),
    groupsMaxAgeMs: c.duration(
      raw.groupsMaxAge,
      at("groupsMaxAge"),
      OAUTH_DEFAULTS.groupsMaxAgeMs,
    ),
    idp,
    allow: parsePolicy(c, raw.allow, idp),
    clientMetadataDocuments: parseCimd(c, raw.clientMetadataDocuments),
    redirectSchemes: c.stringList(raw.redirectSchemes, at("redirectSchemes")).map((scheme, i) => {
      const lower = scheme.toLowerCase();
      if (!/^[a-z][a-z0-9+.-]*$/.test(lower) || FORBIDDEN_SCHEMES.includes(lower)) {
        c.fail(
          ["oauth", "redirectSchemes", i],
          `"${scheme}" cannot be a native app's redirect scheme`,
          'give the scheme alone, e.g. "cursor" or "vscode"',
        );
      }
      return lower;
    }),
    idJag: parseIdJag(c, raw.idJag, idp),
    clients: parseConfiguredClients(c, raw.clients),
  };
}
