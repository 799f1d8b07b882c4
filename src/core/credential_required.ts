/**
 * A backend acts as the person, and Gatehouse holds no usable credential of theirs for it.
 * Raised when a session starts or a request is sent; the MCP layer turns it into a JSON-RPC
 * error naming the page to visit (or a URL-mode elicitation, for clients that support it).
 */
import { GatehouseError } from "./errors.ts";

export class CredentialRequiredError extends GatehouseError<"credential_required"> {
  constructor(
    /** The server whose credential is missing. */
    readonly service: string,
    /** The page where the person connects or sets it. */
    readonly pageUrl: string,
    message: string,
  ) {
    super("credential_required", message);
  }
}
