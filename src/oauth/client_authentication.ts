/**
 * Client authentication at /token and /revoke (RFC 6749 §2.3): none (a public client),
 * client_secret_post, client_secret_basic, and private_key_jwt (RFC 7523 §2.2) for clients whose
 * metadata document publishes their keys. Also the form rules both endpoints share.
 */
import { matchesHash } from "../crypto/compare.ts";
import {
  decodeJws,
  isPublicKeyAlgorithm,
  namesCriticalExtensions,
  verifyJws,
} from "../crypto/jws.ts";
import type { ClientDirectory } from "./client_directory.ts";
import type { ClientRecord } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import { MAX_JTI_LENGTH } from "./id_jag.ts";

export const CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** A client assertion may live at most this long: its `jti` is remembered that long. */
const MAX_ASSERTION_SECONDS = 10 * 60;
const SKEW_SECONDS = 60;

/** RFC 6749 §3.2: every parameter at most once. */
export function single(form: URLSearchParams, name: string): string | undefined {
  const values = form.getAll(name);
  if (values.length > 1) {
    throw new OAuthError("invalid_request", `the ${name} parameter is repeated`);
  }
  return values[0] === "" ? undefined : values[0];
}

export function required(form: URLSearchParams, name: string): string {
  const value = single(form, name);
  if (value === undefined) throw new OAuthError("invalid_request", `${name} is required`);
  return value;
}

/** The client a request proves it is, or `OAuthError` (`invalid_client` when it proves none). */
export async function authenticateClient(
  form: URLSearchParams,
  authorization: string | null,
  clients: ClientDirectory,
): Promise<ClientRecord> {
  if (single(form, "client_assertion_type") !== undefined) {
    if (authorization || single(form, "client_secret") !== undefined) {
      throw new OAuthError("invalid_request", "use one client authentication method, not two");
    }
    return await privateKeyJwt(form, clients);
  }
  let id = single(form, "client_id");
  let secret = single(form, "client_secret");
  let method: ClientRecord["tokenEndpointAuthMethod"] = secret ? "client_secret_post" : "none";
  if (authorization && /^basic /i.test(authorization)) {
    if (secret) {
      throw new OAuthError("invalid_request", "use one client authentication method, not two");
    }
    const decoded = decodeBasic(authorization.slice(6).trim());
    if (!decoded || (id !== undefined && id !== decoded.id)) {
      throw new OAuthError("invalid_client", "the Basic authorization header is malformed");
    }
    [id, secret, method] = [decoded.id, decoded.secret, "client_secret_basic"];
  }
  const client = await clients.named(id);
  if (!client) throw new OAuthError("invalid_client", "the client is unknown or has expired");
  if (client.tokenEndpointAuthMethod !== method) {
    throw new OAuthError(
      "invalid_client",
      `this client authenticates with ${client.tokenEndpointAuthMethod}, not ${method}`,
    );
  }
  if (method !== "none") {
    if (!(await matchesHash(secret ?? "", client.clientSecretHash ?? ""))) {
      throw new OAuthError("invalid_client", "the client secret is wrong");
    }
  }
  return client;
}

/**
 * private_key_jwt: a JWT the client signed with a key its metadata document publishes, naming
 * itself as `iss` and `sub`, this authorization server's issuer alone as `aud`,
 * short-lived, and used once (`jti`).
 */
async function privateKeyJwt(
  form: URLSearchParams,
  clients: ClientDirectory,
): Promise<ClientRecord> {
  const refuse = (why: string) => new OAuthError("invalid_client", `the client assertion ${why}`);
  if (single(form, "client_assertion_type") !== CLIENT_ASSERTION_TYPE) {
    throw new OAuthError(
      "invalid_request",
      `client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`,
    );
  }
  const jws = decodeJws(required(form, "client_assertion"));
  if (typeof jws === "string") throw refuse(`is not a JWT: ${jws}`);
  const { header, payload } = jws;
  const alg = header.alg;
  if (!isPublicKeyAlgorithm(alg)) throw refuse("must be signed with RS256, PS256, ES256 or EdDSA");
  if (namesCriticalExtensions(header)) {
    throw refuse("names critical extensions (crit) this gateway does not understand");
  }
  const id = payload.iss;
  if (typeof id !== "string" || payload.sub !== id) {
    throw refuse("must name the client as iss and sub");
  }
  const formId = single(form, "client_id");
  if (formId !== undefined && formId !== id) throw refuse("names another client than client_id");
  const client = await clients.named(id);
  if (!client) throw new OAuthError("invalid_client", "the client is unknown or has expired");
  if (client.tokenEndpointAuthMethod !== "private_key_jwt") {
    throw new OAuthError(
      "invalid_client",
      `this client authenticates with ${client.tokenEndpointAuthMethod}, not private_key_jwt`,
    );
  }
  const kid = header.kid;
  if (kid !== undefined && typeof kid !== "string") throw refuse("has a kid that is not a string");
  const lookup = await clients.assertionKeys(client, kid, alg);
  if (!lookup.ok) throw refuse(`cannot be checked: ${lookup.reason}`);
  let verified = false;
  for (const key of lookup.keys) verified ||= await verifyJws(jws, key, alg);
  if (!verified) throw refuse("signature does not verify with the client's published keys");
  if (!clients.isOwnAudience(payload.aud)) {
    throw refuse("must name this authorization server's issuer, and it alone, as aud");
  }
  const now = Math.floor(clients.now() / 1000);
  const exp = payload.exp;
  if (typeof exp !== "number" || exp + SKEW_SECONDS <= now) throw refuse("has expired");
  if (exp - now > MAX_ASSERTION_SECONDS) {
    throw refuse(`lives longer than ${MAX_ASSERTION_SECONDS} s`);
  }
  const jti = payload.jti;
  if (typeof jti !== "string" || jti === "" || jti.length > MAX_JTI_LENGTH) {
    throw refuse("has no jti");
  }
  if (!(await clients.recordAssertionJti(client, jti, (exp + SKEW_SECONDS) * 1000))) {
    throw refuse("was already used (its jti was seen before)");
  }
  return client;
}

function decodeBasic(encoded: string): { id: string; secret: string } | undefined {
  try {
    const text = atob(encoded);
    const colon = text.indexOf(":");
    if (colon < 1) return undefined;
    return {
      id: decodeURIComponent(text.slice(0, colon).replace(/\+/g, " ")),
      secret: decodeURIComponent(text.slice(colon + 1).replace(/\+/g, " ")),
    };
  } catch {
    return undefined;
  }
}
