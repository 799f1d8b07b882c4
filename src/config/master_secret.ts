/**
 * `secret:` and `previousSecrets:`: the master secret every key is derived from, and the
 * earlier ones still accepted while they are rotated out. Both must be long enough to derive
 * keys from.
 */
import { Secret } from "../core/secret.ts";
import type { Checker } from "./checker.ts";

const MIN_SECRET_BYTES = 32;

/** The master secret, or undefined when none is given (the gateway then keeps one in storage). */
export function parseSecret(c: Checker, value: unknown): Secret | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const text = c.string(value, ["secret"]);
  if (text !== undefined && new TextEncoder().encode(text).length < MIN_SECRET_BYTES) {
    c.fail(
      ["secret"],
      `is shorter than ${MIN_SECRET_BYTES} bytes`,
      "generate one with: openssl rand -base64 48",
    );
  }
  return text === undefined ? undefined : new Secret(text);
}

export function parsePreviousSecrets(c: Checker, value: unknown): Secret[] {
  return c.stringList(value, ["previousSecrets"]).map((text, i) => {
    if (new TextEncoder().encode(text).length < MIN_SECRET_BYTES) {
      c.fail(["previousSecrets", i], `is shorter than ${MIN_SECRET_BYTES} bytes`);
    }
    return new Secret(text);
  });
}
