/**
 * Hides known secret values in text a backend wrote: its stderr, and its output quoted in an
 * error. A backend given a person's token or a configured secret may print it, and what it
 * prints is logged; the logger's field-name redaction cannot see a token inside a free-text line.
 */

import type { LogFields, Logger } from "./logger.ts";

/** What a secret becomes. */
export const MASK = "***";

/**
 * Shorter values are not looked for: they would mask ordinary words and numbers in the output,
 * and a credential that short is not worth hiding anyway.
 */
export const MIN_MASKED_LENGTH = 8;

/**
 * At the end of a cut line, this many characters of a secret's beginning are masked too (the
 * rest of the secret was cut off); fewer would mask chance matches.
 */
const MIN_CUT_PREFIX = 4;

export class SecretMask {
  /** Longest first, so a secret containing another is hidden whole. */
  #values: string[] = [];

  constructor(values: Iterable<string | undefined> = []) {
    for (const value of values) this.add(value);
  }

  /** Adds a value to hide (and its URL-encoded form, as a URL or header may carry it). */
  add(value: string | undefined): void {
    if (value === undefined || value.length < MIN_MASKED_LENGTH) return;
    if (this.#values.includes(value)) return;
    this.#values.push(value);
    const encoded = encodeURIComponent(value);
    if (encoded !== value && !this.#values.includes(encoded)) this.#values.push(encoded);
    this.#values.sort((a, b) => b.length - a.length);
  }

  get size(): number {
    return this.#values.length;
  }

  /**
   * `text` with every known secret replaced by `***`. With `cut` (the text was truncated), a
   * secret's beginning left at the very end is masked as well.
   */
  mask(text: string, { cut = false } = {}): string {
    for (const value of this.#values) {
      if (text.includes(value)) text = text.replaceAll(value, MASK);
    }
    return cut ? this.#maskCutTail(text) : text;
  }

  /** Masks an error's message (and stack, which repeats it) in place; returns the error. */
  maskError<E>(error: E): E {
    if (!(error instanceof Error) || this.#values.length === 0) return error;
    try {
      error.message = this.mask(error.message);
      if (error.stack) error.stack = this.mask(error.stack);
    } catch { /* a frozen error keeps its words; it never came from a backend's output */ }
    return error;
  }

  #maskCutTail(text: string): string {
    for (const value of this.#values) {
      const head = value.slice(0, MIN_CUT_PREFIX);
      let at = text.indexOf(head, Math.max(0, text.length - value.length + 1));
      while (at >= 0) {
        if (value.startsWith(text.slice(at))) return text.slice(0, at) + MASK;
        at = text.indexOf(head, at + 1);
      }
    }
    return text;
  }
}

/**
 * A logger for what comes from a backend: secrets masked in the message and in every string
 * field. Fields are often cut (`line.slice(0, 120)`), so a secret's beginning at the end of
 * one is masked too.
 */
export function maskingLogger(logger: Logger, mask: SecretMask): Logger {
  if (mask.size === 0) return logger;
  const cut = { cut: true };
  const fields = (given?: LogFields): LogFields | undefined => {
    if (!given) return given;
    const out: LogFields = {};
    for (const key in given) {
      const value = given[key];
      out[key] = typeof value === "string"
        ? mask.mask(value, cut)
        : value instanceof Error
        ? { name: value.name, message: mask.mask(value.message, cut) }
        : value;
    }
    return out;
  };
  return {
    debug: (message, given) => logger.debug(mask.mask(message, cut), fields(given)),
    info: (message, given) => logger.info(mask.mask(message, cut), fields(given)),
    warn: (message, given) => logger.warn(mask.mask(message, cut), fields(given)),
    error: (message, given) => logger.error(mask.mask(message, cut), fields(given)),
    child: (given) => maskingLogger(logger.child(fields(given) ?? {}), mask),
  };
}
