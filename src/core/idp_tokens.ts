/**
 * The tokens the company identity provider issued for a person at sign-in (or at a later
 * refresh), as the gateway keeps them: sealed in storage (credentials/idp_token_vault.ts),
 * never in a page, a log, an access token or a backend's hands unless a feature sends one on
 * purpose (RFC 8693 exchange). They let the gateway ask the provider about the person again
 * (groups, whether the person still exists) and act as them at the provider.
 */
export interface IdpTokens {
  /** The provider's access token (for userinfo, GitHub's API, a token exchange). */
  accessToken: string;
  /** Epoch ms when the access token stops working; undefined when the provider did not say. */
  accessExpiresAt?: number;
  /** The provider's refresh token, when it issued one (`offline_access`, GitHub Apps). */
  refreshToken?: string;
  /** The last ID token the provider issued (OpenID Connect), as it sent it. */
  idToken?: string;
  /** The scope the provider granted, when it said. */
  scope?: string;
  /** Epoch ms when the provider issued these (the sign-in, or the last refresh). */
  obtainedAt: number;
}

/** Whether `tokens`' access token can still be used at `now` (a minute's margin for the trip). */
export function accessTokenLive(tokens: IdpTokens, now: number): boolean {
  return tokens.accessExpiresAt === undefined || tokens.accessExpiresAt - 60_000 > now;
}
