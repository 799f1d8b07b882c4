/** The company identity provider behind one interface, whatever its protocol. */
import { GatehouseError } from "../core/errors.ts";
import type { Identity } from "../core/identity.ts";
import type { IdpTokens } from "../core/idp_tokens.ts";

export interface LoginStart {
  state: string;
  nonce: string;
  codeChallenge: string;
  redirectUri: string;
}

export interface LoginFinish {
  /** The full callback URL the provider sent the browser to. */
  callbackUrl: URL;
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
}

/** Who signed in, and the tokens the provider issued to the gateway for them. */
export interface SignedIn {
  identity: Identity;
  tokens: IdpTokens;
}

export interface IdentityProvider {
  readonly kind: string;
  /** Where to send the browser to log in. */
  authorizationUrl(start: LoginStart): Promise<URL>;
  /** Exchanges the callback's code and returns who logged in; throws `IdpError` otherwise. */
  completeLogin(finish: LoginFinish): Promise<SignedIn>;
  /**
   * The person's groups as the provider states them now, asked with the tokens kept from their
   * sign-in (refreshed first where a refresh token is kept): the groups, and the tokens to keep
   * from now on. Throws `IdpError` "revoked" when the provider no longer knows the person or
   * refuses their tokens (invalid_grant, 401), any other code when it could not be asked.
   */
  renew(subject: string, tokens: IdpTokens): Promise<Renewal>;
  /**
   * RFC 8693: a token for a backend in exchange for the person's `accessToken` at the provider
   * (token_exchange.ts); absent where the provider has no such grant (GitHub).
   */
  exchange?(accessToken: string, request: ExchangeRequest): Promise<ExchangedToken>;
}

/** What the provider says of a person when asked again after their sign-in. */
export interface Renewal {
  /** As `Identity.groups`: undefined when this provider reads no groups. */
  groups?: string[];
  /** As `Identity.orgs` (GitHub). */
  orgs?: string[];
  tokens: IdpTokens;
}

/** Where a provider reports what it accepted only in part (the gateway's logger fits). */
export interface IdpLog {
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** A login that failed at or after the provider; the message is shown to the person. */
export class IdpError extends GatehouseError<
  "provider_error" | "login_refused" | "invalid_response" | "unreachable" | "revoked" | "refused"
> {}

/** Outbound calls to a provider give up after this long. */
export const IDP_TIMEOUT_MS = 10_000;

/** What a backend's token is asked for in an RFC 8693 exchange (token_exchange.ts). */
export interface ExchangeRequest {
  audience: string;
  scopes: string[];
  resource?: string;
}

/** The token the provider issued for the backend. */
export interface ExchangedToken {
  token: string;
  /** Seconds it lives, when the provider said. */
  expiresIn?: number;
}
