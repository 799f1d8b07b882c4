/**
 * Who is calling an MCP endpoint. Static bearer tokens from a server's `serviceAuths` are
 * compared as SHA-256 digests in constant time (the caller's identity is a fingerprint of the
 * token, so no token ever appears in state or logs), and so are HTTP Basic pairs (digests of
 * "username:password"; the caller is named by the username alone, since a fingerprint of a
 * password people chose could be guessed back from the logs). Either counts as a member of its
 * entry's `groups`. With `oauth:` configured, Gatehouse's own access tokens are accepted when
 * their audience names this server.
 */
import { createHash } from "node:crypto";
import type { ServerConfig } from "../config/types.ts";
import { userId } from "../core/ids.ts";
import type { Principal } from "../core/principal.ts";
import { timingSafeEqual } from "../crypto/compare.ts";
import { looksLikeJwt } from "../crypto/jwt.ts";
import { fingerprint } from "../crypto/random.ts";
import type { TokenVerifier } from "../oauth/token_verifier.ts";

export type AuthResult =
  | { ok: true; principal: Principal }
  | { ok: false; error: "unauthorized" | "invalid_token" | "invalid_request"; description: string };

export interface ServerAuthenticator {
  authenticate(request: Request, remoteAddress: string): Promise<AuthResult>;
}

/**
 * Synchronous on purpose: `crypto.subtle.digest` costs about 30 µs of CPU for a short token in
 * Deno, node:crypto about 7, and this runs on every request with a static token.
 */
function sha256(data: string | Uint8Array): Uint8Array {
  return createHash("sha256").update(data).digest();
}

const BEARER = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i;
const BASIC = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})\s*$/i;

/** A configured credential: the digest a caller's must equal, and who such a caller is. */
interface Credential {
  digest: Uint8Array;
  principal: Principal;
}

/** The index of the credential whose digest `given` equals; every one is compared, always. */
function matching(credentials: Credential[], given: Uint8Array): number {
  let found = -1;
  credentials.forEach((credential, i) => {
    if (timingSafeEqual(given, credential.digest)) found = i;
  });
  return found;
}

/** The decoded user-pass of a Basic header, as the bytes the client sent; undefined if garbled. */
function basicBytes(header: string): Uint8Array | undefined {
  const encoded = BASIC.exec(header)?.[1];
  if (!encoded) return undefined;
  try {
    return Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** Who the server's service credentials stand for, worked out once. */
async function serviceCredentials(server: ServerConfig) {
  const bearer: Credential[] = [];
  const basic: Credential[] = [];
  for (const auth of server.serviceAuths) {
    const groups = auth.groups.length ? { groups: auth.groups } : {};
    if (auth.type === "bearer") {
      for (const token of auth.tokens.map((t) => t.reveal())) {
        const id = userId(`token:${await fingerprint(token)}`);
        bearer.push({ digest: sha256(token), principal: { id, ...groups } });
      }
    } else {
      basic.push({
        digest: sha256(`${auth.username}:${auth.password.reveal()}`),
        principal: { id: userId(`basic:${auth.username}`), ...groups },
      });
    }
  }
  return { bearer, basic };
}

export async function createAuthenticator(
  server: ServerConfig,
  oauth?: TokenVerifier,
): Promise<ServerAuthenticator> {
  if (server.public) {
    return {
      authenticate: (_request, remoteAddress) =>
        Promise.resolve({ ok: true, principal: { id: userId(`anonymous:${remoteAddress}`) } }),
    };
  }
  const credentials = await serviceCredentials(server);
  return {
    async authenticate(request) {
      if (
        request.url.includes("access_token") &&
        new URL(request.url).searchParams.has("access_token")
      ) {
        return {
          ok: false,
          error: "invalid_request",
          description: "tokens in the query string are refused; send Authorization: Bearer <token>",
        };
      }
      const header = request.headers.get("authorization");
      if (credentials.basic.length > 0 && header && /^basic /i.test(header)) {
        const pair = basicBytes(header);
        const found = pair ? matching(credentials.basic, sha256(pair)) : -1;
        if (found >= 0) return { ok: true, principal: credentials.basic[found].principal };
        return {
          ok: false,
          error: "unauthorized",
          description: `the username or password is wrong for the server "${server.name}"`,
        };
      }
      const match = header ? BEARER.exec(header) : null;
      if (!match) {
        return {
          ok: false,
          error: "unauthorized",
          description: oauth
            ? `the server "${server.name}" requires authorization: sign in through your MCP client`
            : credentials.bearer.length === 0
            ? `the server "${server.name}" requires a username and password: send Authorization: Basic`
            : `the server "${server.name}" requires a bearer token: send Authorization: Bearer <token>`,
        };
      }
      const token = match[1];
      // Gatehouse's own tokens first (a cached check); a static token that happens to look
      // like a JWT fails that check and is matched below.
      const jwt = oauth && looksLikeJwt(token) ? await oauth.verify(token, server.name) : undefined;
      if (jwt?.ok) {
        return {
          ok: true,
          principal: {
            id: userId(jwt.claims.sub),
            email: jwt.claims.email,
            clientId: jwt.claims.client_id,
            groups: jwt.claims.groups ?? [],
            grantId: jwt.claims.fam,
          },
        };
      }
      if (credentials.bearer.length > 0) {
        const found = matching(credentials.bearer, sha256(token));
        if (found >= 0) return { ok: true, principal: credentials.bearer[found].principal };
      }
      if (jwt) return { ok: false, error: "invalid_token", description: jwt.description };
      return {
        ok: false,
        error: "invalid_token",
        description: `the bearer token is not valid for the server "${server.name}"`,
      };
    },
  };
}
