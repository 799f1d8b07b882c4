/**
 * One socket to a backend and its read buffer, with the reads the HTTP/1.1 client makes on it:
 * an answer's head, a body of known length, a chunk-size line.
 */
import { GatehouseError } from "../core/errors.ts";
import { findHeadEnd, type Head, parseHead } from "./http1_wire.ts";

const latin1 = new TextDecoder("latin1");

/**
 * The connection ended (or failed) before a single byte of the answer arrived. `written` says
 * whether any byte of the request may have reached the backend: if so, the backend may have
 * read the request and acted on it.
 */
export class ConnectionClosedEarly extends GatehouseError<"connection_closed_early"> {
  constructor(readonly written: boolean, options?: ErrorOptions) {
    super("connection_closed_early", "the backend closed the connection before answering", options);
  }
}

/** One socket, its read buffer, and whether it may carry another request. */
export class Connection {
  buffer: Uint8Array<ArrayBuffer> = new Uint8Array(16 * 1024);
  start = 0;
  end = 0;
  reused = false;
  idleSince = 0;
  broken = false;
  /** The read left waiting while idle: it sees the server closing, or the next answer. */
  #parkedRead?: Promise<number | null>;

  constructor(readonly conn: Deno.Conn, readonly origin: string) {}

  /** Waits until more bytes are in; false at the end of the stream. */
  async fill(limit: number): Promise<boolean> {
    let read = this.#parkedRead;
    this.#parkedRead = undefined;
    if (!read) {
      if (this.start > 0) {
        this.buffer.copyWithin(0, this.start, this.end);
        this.end -= this.start;
        this.start = 0;
      }
      if (this.end === this.buffer.length) {
        if (this.buffer.length >= limit) {
          throw new TypeError("the backend's answer head is too large");
        }
        const bigger = new Uint8Array(Math.min(limit, this.buffer.length * 2));
        bigger.set(this.buffer.subarray(0, this.end));
        this.buffer = bigger;
      }
      read = this.conn.read(this.buffer.subarray(this.end));
    }
    const n = await read;
    if (n === null) return false;
    this.end += n;
    return true;
  }

  /** Leaves a read waiting; returns the promise that settles when the server speaks or leaves. */
  park(now: number): Promise<number | null> {
    this.start = this.end = 0;
    this.idleSince = now;
    const read = this.conn.read(this.buffer).catch(() => null);
    this.#parkedRead = read;
    return read;
  }

  /** The read left waiting while idle, if there is one. */
  get parkedRead(): Promise<number | null> | undefined {
    return this.#parkedRead;
  }

  /** Whether the parked read is still the one waiting (nothing arrived while idle). */
  isParked(read: Promise<number | null>): boolean {
    return this.#parkedRead === read;
  }

  close(): void {
    this.broken = true;
    try {
      this.conn.close();
    } catch { /* closed already */ }
  }

  indexOf(byte: number, from: number): number {
    const at = this.buffer.subarray(from, this.end).indexOf(byte);
    return at < 0 ? -1 : from + at;
  }
}

/**
 * Reads an answer's head. On the `first` read of an exchange, a connection that ends or fails
 * before any byte of it arrives throws `ConnectionClosedEarly` (the request was written).
 */
export async function readHead(
  connection: Connection,
  maxHeadBytes: number,
  first: boolean,
): Promise<Head> {
  let headEnd: number;
  while ((headEnd = findHeadEnd(connection.buffer, connection.start, connection.end)) < 0) {
    const nothingYet = connection.end === connection.start;
    let more: boolean;
    try {
      more = await connection.fill(maxHeadBytes);
    } catch (error) {
      if (first && nothingYet && !(error instanceof TypeError)) {
        throw new ConnectionClosedEarly(true, { cause: error });
      }
      throw error;
    }
    if (!more) {
      if (first && nothingYet) throw new ConnectionClosedEarly(true);
      throw new TypeError("the backend closed the connection in the middle of its answer");
    }
  }
  const text = latin1.decode(connection.buffer.subarray(connection.start, headEnd));
  connection.start = headEnd;
  return parseHead(text);
}

export async function readExactly(
  connection: Connection,
  length: number,
): Promise<Uint8Array<ArrayBuffer>> {
  while (connection.end - connection.start < length) {
    if (!(await connection.fill(Infinity))) {
      throw new TypeError("the backend closed the connection in the middle of its answer");
    }
  }
  const body = connection.buffer.slice(connection.start, connection.start + length);
  connection.start += length;
  return body;
}

/** One line of chunked framing (a size line, a trailer, the CRLF after a chunk). */
export async function readLine(connection: Connection): Promise<string> {
  let lf: number;
  while ((lf = connection.indexOf(10, connection.start)) < 0) {
    if (connection.end - connection.start > 8192) {
      throw new TypeError("the backend's chunked answer is malformed");
    }
    if (!(await connection.fill(Infinity))) {
      throw new TypeError("the backend closed the connection in the middle of its answer");
    }
  }
  const line = latin1.decode(connection.buffer.subarray(connection.start, lf)).replace(/\r$/, "");
  connection.start = lf + 1;
  return line;
}
