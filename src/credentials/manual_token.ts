/** What a pasted token must be before it is stored: short, printable, and the service's shape. */
import { GatehouseError } from "../core/errors.ts";

/** Longest manual token accepted. */
export const MAX_TOKEN_BYTES = 8 * 1024;

/** Why a pasted token was refused; the page shows a sentence for each. */
export class TokenInputError
  extends GatehouseError<"empty" | "too_long" | "invalid_characters" | "pattern"> {
  constructor(code: TokenInputError["code"]) {
    super(code, code);
  }
}

/** The token as it will be stored (trimmed); throws `TokenInputError` with the reason. */
export function checkManualToken(raw: string, pattern: string | undefined): string {
  const token = raw.trim();
  if (!token) throw new TokenInputError("empty");
  if (new TextEncoder().encode(token).length > MAX_TOKEN_BYTES) {
    throw new TokenInputError("too_long");
  }
  // It travels in headers and environment variables: no spaces or control characters.
  if (!/^[\x21-\x7e]+$/.test(token)) throw new TokenInputError("invalid_characters");
  if (pattern && !new RegExp(pattern).test(token)) throw new TokenInputError("pattern");
  return token;
}
