/**
 * A buffer for a connection's reads that starts small and doubles, up to its most, each time
 * a read fills it: a connection that carries little (an idle stream, small messages) keeps a
 * small one, one that carries much soon reads in large steps.
 */
export class ReadBuffer {
  #bytes: Uint8Array;

  constructor(initial: number, private readonly most: number) {
    this.#bytes = new Uint8Array(Math.min(initial, most));
  }

  /** Where the next read goes. */
  get bytes(): Uint8Array {
    return this.#bytes;
  }

  /**
   * The last read brought `n` bytes; a full buffer grows for the next one. Call it only once
   * the bytes read are no longer needed: they are left behind.
   */
  filled(n: number): void {
    const size = this.#bytes.length;
    if (n === size && size < this.most) this.#bytes = new Uint8Array(Math.min(size * 2, this.most));
  }
}
