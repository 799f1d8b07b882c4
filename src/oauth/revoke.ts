/**
 * POST /revoke (RFC 7009): a client tells the authorization server it no longer needs a token.
 * A refresh token ends its whole grant (family); an access token (a Gatehouse JWT that
 * verifies) ends the grant it came from, so its refresh token and every access token of the
 * grant stop working on every replica within the revocation poll (revocations.ts).
 *
 * The checks, in RFC 7009 §2.1's order: the client authenticates exactly as at /token; the
 * token must have been issued to that client. A token of another client, an unknown, expired
 * or malformed one is answered 200 and changes nothing (§2.2): refusing it would tell a client
 * that a string it holds is someone else's live token.
 */
import { decodeBase64Url } from "../crypto/base64url.ts";
import { JwtError } from "../crypto/jwt.ts";
import type { AccessTokens } from "./access_tokens.ts";
import type { ClientDirectory } from "./client_directory.ts";
import type { ClientRecord } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import type { GrantStore } from "./grants.ts";
import type { Admit } from "./token.ts";
import { authenticateClient, required, single } from "./client_authentication.ts";

export interface RevocationDeps {
  clients: ClientDirectory;
  grants: GrantStore;
  accessTokens: AccessTokens;
}

/** What a token turned out to be: the grant it belongs to and the client it was issued to. */
interface Found {
  familyId: string;
  clientId: string;
}

type Finder = (token: string, deps: RevocationDeps) => Promise<Found | undefined>;

const HINTS = ["access_token", "refresh_token"] as const;

/** Revokes the grant of `token` when it is this client's; resolves (200) in every other case. */
export async function handleRevocationRequest(
  form: URLSearchParams,
  authorization: string | null,
  deps: RevocationDeps,
  admit: Admit,
): Promise<{ revoked?: string }> {
  const client = await authenticateClient(form, authorization, deps.clients);
  if (client.tokenEndpointAuthMethod !== "none") await admit(client);
  const token = required(form, "token");
  const hint = single(form, "token_type_hint");
  if (hint !== undefined && !(HINTS as readonly string[]).includes(hint)) {
    throw new OAuthError(
      "unsupported_token_type",
      `token_type_hint ${
        hint.slice(0, 60)
      } names no token Gatehouse issues; send access_token or refresh_token, or leave it out`,
    );
  }
  // The hint only orders the search (§2.1): a wrong one still finds the token.
  const finders: Finder[] = hint === "access_token"
    ? [accessToken, refreshToken]
    : [refreshToken, accessToken];
  for (const find of finders) {
    const found = await find(token, deps);
    if (!found) continue;
    return await revokeIfOwn(found, client, deps, admit);
  }
  return {};
}

async function revokeIfOwn(
  found: Found,
  client: ClientRecord,
  deps: RevocationDeps,
  admit: Admit,
): Promise<{ revoked?: string }> {
  if (found.clientId !== client.clientId) return {};
  // A public client is proven only now, by holding a token of its own (as at /token).
  if (client.tokenEndpointAuthMethod === "none") await admit(client);
  if (await deps.grants.isFamilyRevoked(found.familyId)) return {};
  await deps.grants.revokeFamily(found.familyId);
  return { revoked: found.familyId };
}

const refreshToken: Finder = async (token, deps) => {
  const record = await deps.grants.refreshRecord(token);
  return record && { familyId: record.familyId, clientId: record.clientId };
};

const accessToken: Finder = async (token, deps) => {
  const audience = claimedAudience(token);
  if (audience === undefined) return undefined;
  try {
    // The audience was read unverified; the signature below covers it.
    const claims = await deps.accessTokens.verify(token, audience);
    return { familyId: claims.fam, clientId: claims.client_id };
  } catch (error) {
    if (error instanceof JwtError) return undefined;
    throw error;
  }
};

/** The first audience a JWT claims, read without verifying it; undefined when none. */
function claimedAudience(token: string): string | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(new TextDecoder().decode(decodeBase64Url(parts[1])));
    const aud = Array.isArray(claims?.aud) ? claims.aud[0] : claims?.aud;
    return typeof aud === "string" ? aud : undefined;
  } catch {
    return undefined;
  }
}
