/**
 * Who is calling an MCP endpoint. Static bearer tokens from a server's `serviceAuths` are
 * compared in a time that depends only on the configured token (the caller's identity is a
 * fingerprint of the token, so no token ever appears in state or logs), and so are HTTP Basic
 * pairs ("username:password"; the caller is named by the username alone, since a fingerprint of
 * a password people chose could be guessed back from the logs). Either counts as a member of its
 * entry's `groups`. With `oauth:` configured, Gatehouse's own access tokens are accepted when
 * their audience names this server; such a caller's groups are those its grant keeps (read once
 * per replica by the token verifier) that the configuration running now names, so a reload that
 * names a new group admits its members on their next request, whatever their token carries.
 */
import type { ServerConfig } from "../config/types.ts";
import { userId } from "../core/ids.ts";
import type { Principal } from "../core/principal.ts";
import { equalsSecret } from "../crypto/compare.ts";
import { looksLikeJwt } from "../crypto/jwt.ts";
import { fingerprint } from "../crypto/random.ts";
import type { TokenVerifier } from "../oauth/token_verifier.ts";

export type AuthResult =
  | { ok: true; principal: Principal }
  | { ok: false; error: "unauthorized" | "invalid_token" | "invalid_request"; description: string };

export interface ServerAuthenticator {
  authenticate(request: Request, remoteAddress: string): Promise<AuthResult>;
}

const BEARER = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i;
const BASIC = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})\s*$/i;

/**
 * A configured credential: the secret a caller's must equal, and who such a caller is. A Basic
 * pair is kept as its UTF-8 bytes, one character per byte, the form `atob` decodes a header to.
 */
interface Credential {
  secret: string;
  principal: Principal;
}

/**
 * The index of the credential `given` equals; every one is compared, always, without hashing:
 * SHA-256 through node:crypto cost 3–5 µs a request, more than the rest of authentication.
 */
function matching(credentials: Credential[], given: string): number {
  let found = -1;
  for (let i = 0; i < credentials.length; i++) {
    if (equalsSecret(credentials[i].secret, given)) found = i;
  }
  return found;
}

/** The decoded user-pass of a Basic header, one character per byte sent; undefined if garbled. */
function basicPair(header: string): string | undefined {
  const encoded = BASIC.exec(header)?.[1];
  if (!encoded) return undefined;
  try {
    return atob(encoded);
  } catch {
    return undefined;
  }
}

/** A string's UTF-8 bytes as one character per byte, as `atob` gives a Basic header's pair. */
function byteString(text: string): string {
  return String.fromCharCode(...new TextEncoder().encode(text));
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
        bearer.push({ secret: token, principal: { id, ...groups } });
      }
    } else {
      basic.push({
        secret: byteString(`${auth.username}:${auth.password.reveal()}`),
        principal: { id: userId(`basic:${auth.username}`), ...groups },
      });
    }
  }
  return { bearer, basic };
}

export async function createAuthenticator(
  server: ServerConfig,
  oauth?: TokenVerifier,
  /** Every group the running configuration names (config/named_groups.ts). */
  namedGroups: ReadonlySet<string> = new Set(),
): Promise<ServerAuthenticator> {
  if (server.public) {
    return {
      authenticate: (_request, remoteAddress) =>
        Promise.resolve({ ok: true, principal: { id: userId(`anonymous:${remoteAddress}`) } }),
    };
  }
  const credentials = await serviceCredentials(server);
  // A grant's groups narrowed to those the configuration names, once per grant: the verifier
  // hands out the same list for a grant until it reads the grant again.
  const narrowed = new WeakMap<readonly string[], readonly string[]>();
  const groupsOf = (check: { groups?: readonly string[]; claims: { groups?: string[] } }) => {
    const granted = check.groups;
    if (granted === undefined) return check.claims.groups ?? [];
    let named = narrowed.get(granted);
    if (!named) narrowed.set(granted, named = granted.filter((group) => namedGroups.has(group)));
    return named;
  };
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
        const pair = basicPair(header);
        const found = pair === undefined ? -1 : matching(credentials.basic, pair);
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
            groups: groupsOf(jwt),
            allGroups: jwt.groups ?? jwt.claims.groups ?? [],
            grantId: jwt.claims.fam,
          },
        };
      }
      if (credentials.bearer.length > 0) {
        const found = matching(credentials.bearer, token);
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
