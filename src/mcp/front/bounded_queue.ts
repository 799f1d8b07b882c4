/**
 * A first-in-first-out queue bounded by count and by size: pushing past either bound drops the
 * oldest items (each reported to `onDrop`) until both hold again.
 */
export class BoundedQueue<T> {
  #items: { item: T; size: number }[] = [];
  #head = 0;
  #size = 0;

  constructor(
    readonly maxCount: number,
    readonly maxSize: number,
    private readonly onDrop: (item: T) => void = () => {},
  ) {}

  get length(): number {
    return this.#items.length - this.#head;
  }

  /** The total size of the items held. */
  get size(): number {
    return this.#size;
  }

  push(item: T, size: number): void {
    this.#items.push({ item, size });
    this.#size += size;
    while (this.length > 0 && (this.length > this.maxCount || this.#size > this.maxSize)) {
      this.onDrop(this.shift()!);
    }
  }

  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const { item, size } = this.#items[this.#head];
    this.#items[this.#head++] = undefined as never;
    this.#size -= size;
    // Compact now and then instead of shifting the array on every call.
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Removes and returns every item, oldest first. */
  drain(): T[] {
    const items: T[] = [];
    for (let item = this.shift(); item !== undefined; item = this.shift()) items.push(item);
    return items;
  }
}
