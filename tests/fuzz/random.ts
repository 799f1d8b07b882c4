/** A seeded random source (mulberry32), so every fuzz run can be replayed from its seed. */
export class Random {
  #state: number;

  constructor(readonly seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(below: number): number {
    return Math.floor(this.next() * below);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** Text that is hard on parsers: controls, quotes, separators, non-ASCII, long runs. */
  text(max = 40): string {
    const pieces = [
      "a",
      "Z",
      "0",
      " ",
      "\t",
      "\n",
      "\r\n",
      "\0",
      '"',
      "'",
      "\\",
      "/",
      "..",
      "%",
      "%00",
      "%2e",
      "{",
      "}",
      "[",
      "]",
      ":",
      ",",
      ";",
      "=",
      "&",
      "?",
      "#",
      "<",
      ">",
      "é",
      "字",
      "\u{1F600}",
      "\uFEFF",
      "\uD800",
      "{{user.token}}",
      "${HOME}",
      "null",
      "true",
      "-1",
      "1e309",
      "NaN",
    ];
    let out = "";
    const length = this.int(max);
    for (let i = 0; i < length; i++) out += this.pick(pieces);
    if (this.chance(0.02)) out += "x".repeat(this.int(100_000));
    return out;
  }

  /** A JSON value of bounded depth, sometimes odd (deep, wide, huge numbers). */
  json(depth = 3): unknown {
    const kind = this.int(depth > 0 ? 9 : 6);
    switch (kind) {
      case 0:
        return null;
      case 1:
        return this.chance(0.5);
      case 2:
        return this.pick([0, -1, 1.5, 2 ** 53 + 1, -(2 ** 63), 1e308, Number.MAX_SAFE_INTEGER]);
      case 3:
      case 4:
      case 5:
        return this.text();
      case 6:
      case 7:
        return Array.from({ length: this.int(5) }, () => this.json(depth - 1));
      default:
        return Object.fromEntries(
          Array.from({ length: this.int(5) }, () => [this.text(8), this.json(depth - 1)]),
        );
    }
  }
}
