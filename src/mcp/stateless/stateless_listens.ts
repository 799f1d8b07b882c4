/**
 * What this process keeps of 2026 clients' open `subscriptions/listen` streams besides the
 * streams themselves: which grant each belongs to, so that revoking the grant ends it, and how
 * many resource URIs each person's listens watch, so that one person cannot make the gateway
 * hold (and subscribe a backend to) without bound.
 */
import type { Principal } from "../../core/principal.ts";

/** Why a listen ended when its grant was revoked (the client reads it in the listen's answer). */
export const REVOKED_LISTEN =
  "the grant this listen was opened with was revoked: sign in again through your MCP client";

export class ListenLedger {
  /** Open listens by the grant of the request that opened each: their enders. */
  readonly #ofGrant = new Map<string, Set<(reason: string) => void>>();
  /** Resource URIs the person's open listens watch, by person. */
  readonly #watched = new Map<string, number>();

  constructor(
    /** Whether a grant is revoked, as this replica knows it (no storage read). */
    private readonly isRevoked: (grantId: string) => boolean = () => false,
  ) {}

  /**
   * Calls `end` when the grant `principal`'s request came with is revoked (`endGrants`), or at
   * once when it already is (it may have been while the listen's link was opening), until the
   * returned function is called. A listen belongs to its own request's grant, not to the grant
   * that opened the link it runs on: another client's grant may have opened that.
   */
  untilRevoked(principal: Principal, end: (reason: string) => void): () => void {
    const grant = principal.grantId;
    if (grant === undefined) return () => {};
    if (this.isRevoked(grant)) {
      end(REVOKED_LISTEN);
      return () => {};
    }
    let enders = this.#ofGrant.get(grant);
    if (!enders) this.#ofGrant.set(grant, enders = new Set());
    enders.add(end);
    return () => {
      enders.delete(end);
      if (enders.size === 0 && this.#ofGrant.get(grant) === enders) this.#ofGrant.delete(grant);
    };
  }

  /** Ends the listens opened under any of `grantIds` (revoked); returns how many ended. */
  endGrants(grantIds: readonly string[], reason = REVOKED_LISTEN): number {
    let ended = 0;
    for (const grant of grantIds) {
      const enders = this.#ofGrant.get(grant);
      this.#ofGrant.delete(grant);
      for (const end of enders ?? []) {
        end(reason);
        ended++;
      }
    }
    return ended;
  }

  /**
   * Counts `count` more URIs watched by the person's listens, unless that would pass `max`:
   * then nothing is counted and how many are watched already is returned. Undefined: counted
   * (`unwatch` gives them back when the listen ends).
   */
  watch(principal: Principal, count: number, max: number): number | undefined {
    const watched = this.#watched.get(principal.id) ?? 0;
    if (watched + count > max) return watched;
    if (count > 0) this.#watched.set(principal.id, watched + count);
    return undefined;
  }

  unwatch(principal: Principal, count: number): void {
    const left = (this.#watched.get(principal.id) ?? 0) - count;
    if (left > 0) this.#watched.set(principal.id, left);
    else this.#watched.delete(principal.id);
  }
}
