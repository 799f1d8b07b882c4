/**
 * A secret value that never prints: string conversion, JSON and `Deno.inspect` all show `***`.
 * Read it with `reveal()`, at the one place that needs the real value.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return "***";
  }

  toJSON(): string {
    return "***";
  }

  [Symbol.for("Deno.customInspect")](): string {
    return "Secret(***)";
  }
}
