/**
 * Who is calling an MCP endpoint. Static bearer tokens from a server's `serviceAuths` are
 * compared as SHA-256 digests in constant time (the caller's identity is a fingerprint of the
 * token, so no token ever appears in state or logs); with `oauth:` configured, Gatehouse's own
 * access tokens are accepted when their audience names this server.
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
function sha256(text: string): Uint8Array {
  return createHash("sha256").update(text).digest();
}

const BEARER = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i;

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
  const tokens = server.serviceAuths.flatMap((auth) => auth.type === "bearer" ? auth.tokens : [])
    .map((t) => t.reveal());
  const digests = tokens.map(sha256);
  // Worked out once: who each configured token stands for.
  const principals: Principal[] = await Promise.all(
    tokens.map(async (token) => ({ id: userId(`token:${await fingerprint(token)}`) })),
  );
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
      const match = header ? BEARER.exec(header) : null;
      if (!match) {
        return {
          ok: false,
          error: "unauthorized",
          description: oauth
            ? `the server "${server.name}" requires authorization: sign in through your MCP client`
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
          },
        };
      }
      if (digests.length > 0) {
        const given = sha256(token);
        let found = -1;
        digests.forEach((digest, i) => {
          if (timingSafeEqual(given, digest)) found = i;
        });
        if (found >= 0) return { ok: true, principal: principals[found] };
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
