/**
 * Whether a stored credential can be used, and when not, the `CredentialRequiredError` that
 * tells the person what to do and where (the MCP layer turns it into a URL elicitation or an
 * error naming the page).
 */
import { CredentialRequiredError } from "../core/credential_required.ts";
import { type StoredCredential, UNREADABLE } from "./vault.ts";

export interface CredentialNames {
  service: string;
  /** The service's name as people know it. */
  name: string;
  /** Where the person sets or connects it. */
  page: string;
  verb: "add" | "connect";
}

/** The credential when it is usable; else throws the error saying what to do. */
export function usableCredential(
  stored: StoredCredential | typeof UNREADABLE | undefined,
  { service, name, page, verb }: CredentialNames,
): StoredCredential {
  if (stored === undefined) {
    throw new CredentialRequiredError(
      service,
      page,
      `${name} needs your own credential and Gatehouse has none for you: ${verb} it at ${page}, then try again`,
    );
  }
  if (stored === UNREADABLE) {
    throw new CredentialRequiredError(
      service,
      page,
      `your stored ${name} credential can no longer be read (the gateway's secret changed): set it again at ${page}`,
    );
  }
  if (stored.needsReconnect) {
    throw new CredentialRequiredError(
      service,
      page,
      `your ${name} connection has to be renewed (${stored.needsReconnect}): reconnect at ${page}`,
    );
  }
  return stored;
}

/** A server wants scopes the person's connection lacks: they connect again to grant them. */
export function stepUpRequired(
  service: string,
  name: string,
  page: string,
  scopes: string[],
): CredentialRequiredError {
  return new CredentialRequiredError(
    service,
    page,
    `${name} needs more access than your connection gives (${
      scopes.join(" ")
    }): connect again at ${page} to grant it, then try again`,
  );
}
