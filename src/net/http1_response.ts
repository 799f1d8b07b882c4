/**
 * The answers the gateway's HTTP/1.1 client returns: `Response`s whose `Headers` object is made
 * only when someone reads `headers`. Making one checks and normalises every header, 2–5 µs for
 * a backend's usual five, more than the rest of reading a small answer; the gateway's own
 * transports ask for the three or four headers they need with `headerOf()`, which reads the
 * list as parsed. Everything else (the SDK's transports, `clone()`, a new `Response` made from
 * this one's init) reads `headers` and gets them all.
 */

export class Http1Response extends Response {
  /** Names in lower case, values trimmed and checked (http1_wire.ts `parseHead`). */
  readonly #list: readonly [string, string][];
  #filled = false;

  /** The body as read: bytes or a stream, which give no `Headers` of their own (a string would). */
  constructor(
    body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null,
    status: number,
    statusText: string,
    list: readonly [string, string][],
  ) {
    super(body, { status, statusText });
    this.#list = list;
  }

  override get headers(): Headers {
    const headers = super.headers;
    if (!this.#filled) {
      this.#filled = true;
      for (const [name, value] of this.#list) headers.append(name, value);
    }
    return headers;
  }

  override clone(): Response {
    // The copy is made from the internal list: fill it first.
    void this.headers;
    return super.clone();
  }

  /** One header's value as `Headers.get` gives it (repeats joined by ", "); `name` lower case. */
  header(name: string): string | null {
    // Once made, `headers` may have been changed: it is the answer.
    if (this.#filled) return super.headers.get(name);
    let value: string | null = null;
    for (const [given, each] of this.#list) {
      if (given === name) value = value === null ? each : `${value}, ${each}`;
    }
    return value;
  }
}

/** `response.headers.get(name)`, without making the `Headers` of the gateway's own answers. */
export function headerOf(response: Response, name: string): string | null {
  return response instanceof Http1Response ? response.header(name) : response.headers.get(name);
}
