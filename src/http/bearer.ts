/**
 * Bearer-token authentication from a server's `serviceAuths`. Tokens are compared as SHA-256
 * digests in constant time; the caller's identity is a fingerprint of the token, so two
 * people with two tokens count as two users and no token ever appears in state or logs.
 */
import type { ServerConfig } from "../config/types.ts";
import { userId } from "../core/ids.ts";
import type { Principal } from "../core/principal.ts";
import { timingSafeEqual } from "../crypto/compare.ts";
import { fingerprint } from "../crypto/random.ts";

export type AuthResult =
  | { ok: true; principal: Principal }
  | { ok: false; error: "unauthorized" | "invalid_token"; description: string };

export interface ServerAuthenticator {
  authenticate(authorization: string | null, remoteAddress: string): Promise<AuthResult>;
}

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

export async function createAuthenticator(server: ServerConfig): Promise<ServerAuthenticator> {
  if (server.public) {
    return {
      authenticate: (_header, remoteAddress) =>
        Promise.resolve({ ok: true, principal: { id: userId(`anonymous:${remoteAddress}`) } }),
    };
  }
  const digests = await Promise.all(
    server.serviceAuths.flatMap((auth) => auth.tokens).map((token) => sha256(token.reveal())),
  );
  return {
    async authenticate(header) {
      const match = header ? /^Bearer[ ]+([\x21-\x7e]+)\s*$/i.exec(header) : null;
      if (!match) {
        return {
          ok: false,
          error: "unauthorized",
          description:
            `the server "${server.name}" requires a bearer token: send Authorization: Bearer <token>`,
        };
      }
      const given = await sha256(match[1]);
      let found = false;
      for (const digest of digests) found = timingSafeEqual(given, digest) || found;
      if (!found) {
        return {
          ok: false,
          error: "invalid_token",
          description: `the bearer token is not valid for the server "${server.name}"`,
        };
      }
      return { ok: true, principal: { id: userId(`token:${await fingerprint(match[1])}`) } };
    },
  };
}
