/**
 * Per-person service credentials at rest: each record sealed with AES-256-GCM under the
 * vault key, with the person and the service as associated data, so a record copied to another
 * person or service does not open. Nothing here logs or returns a credential to a page.
 */
import { seal, unseal } from "../crypto/aead.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";

/** What Gatehouse holds for one person and one service. */
export interface StoredCredential {
  /** How it was obtained: by connecting over OAuth, or pasted by the person. */
  source: "oauth" | "manual";
  accessToken: string;
  refreshToken?: string;
  /** Epoch ms when the access token expires, when the service said. */
  expiresAt?: number;
  scope?: string;
  /** The authorization server that issued the tokens (kind: mcp): refreshed and revoked there only. */
  issuer?: string;
  updatedAt: number;
  /** Scopes a remote MCP server asked for beyond this connection (403 insufficient_scope). */
  stepUpScopes?: string[];
  /** Set when the service refused a refresh: the person must connect again. */
  needsReconnect?: string;
}

/** A stored record that exists but cannot be opened (another secret, or tampered with). */
export const UNREADABLE = "unreadable" as const;

interface SealedRecord {
  sealed: string;
}

export class CredentialVault {
  /** `keys[0]` seals; every key is tried when opening (secret rotation). */
  constructor(private readonly store: Store, private readonly keys: CryptoKey[]) {}

  async get(
    user: string,
    service: string,
  ): Promise<StoredCredential | typeof UNREADABLE | undefined> {
    const record = await this.store.get<SealedRecord>(KEYS.credential(user, service));
    if (!record) return undefined;
    const text = typeof record.sealed === "string"
      ? await unseal(this.keys, record.sealed, associatedData(user, service))
      : undefined;
    if (text === undefined) return UNREADABLE;
    try {
      return JSON.parse(text) as StoredCredential;
    } catch {
      return UNREADABLE;
    }
  }

  async put(user: string, service: string, credential: StoredCredential): Promise<void> {
    const sealed = await seal(
      this.keys[0],
      JSON.stringify(credential),
      associatedData(user, service),
    );
    await this.store.set(KEYS.credential(user, service), { sealed } satisfies SealedRecord);
  }

  async delete(user: string, service: string): Promise<void> {
    await this.store.delete(KEYS.credential(user, service));
  }
}

/** Service names cannot hold a NUL, so this splits one way only. */
function associatedData(user: string, service: string): string {
  return `gatehouse-credential\0${service}\0${user}`;
}
