/**
 * `admin:` resolved (admin.ts parses it): the operator console, for the people it lists;
 * ResolvedConfig.admin absent means no console (its path answers 404).
 */
export interface AdminConfig {
  /** Addresses (lower case) of people who may open it; their sign-in must not say unverified. */
  emails: string[];
  /** Groups (by the identity provider's groups) whose members may open it. */
  groups: string[];
  /** Where it lives under the base URL, without a trailing slash ("/admin"). */
  path: string;
  /** A console session unused this long ends. */
  idleTimeoutMs: number;
  /**
   * `admin.listen`: the console is served on this address instead of the main port, with a
   * sign-in of its own whose callback is `${url}${path}/callback`.
   */
  listen?: { hostname: string; port: number };
  /** With `listen`: the URL people open it at (no trailing slash). */
  url?: string;
}
