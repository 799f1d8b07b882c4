/**
 * How a `Store` record is written as bytes where the engine has no tuples or structured values
 * of its own (PostgreSQL): a key as an order-preserving encoding of its parts, so that bytewise
 * order (bytea's, and every SQL engine's for bytes) is Deno KV's key order and a prefix of parts
 * is a prefix of bytes; a value as V8's structured serialization, the format Deno KV keeps its
 * values in, so both engines take and give back the same values (Uint8Array, Date, bigint …).
 */
import { deserialize, serialize } from "node:v8";
import type { StoreKey } from "./store.ts";

/** Deno KV's limits, the contract of every engine: code written against one fits the other. */
export const MAX_VALUE_BYTES = 65_536;
export const MAX_ENCODED_KEY_BYTES = 2_048;

/**
 * The type bytes, in Deno KV's order of types (byte arrays, then strings, then numbers). No
 * part starts with 0xff, so `prefix ‖ 0xff` is above every key under `prefix`.
 */
const BYTES = 0x01;
const STRING = 0x02;
const NUMBER = 0x21;
export const PREFIX_END = 0xff;

/**
 * A part's bytes with each 0x00 written 0x00 0xff and a 0x00 after them: the terminator sorts
 * below any continuation, so "a" < "a\0" < "ab" holds for the encodings too.
 */
function escaped(type: number, bytes: Uint8Array, out: number[]): void {
  out.push(type);
  for (const byte of bytes) {
    out.push(byte);
    if (byte === 0) out.push(0xff);
  }
  out.push(0);
}

/** A double as 8 bytes whose unsigned order is numeric order (negatives inverted, sign set). */
function numberBytes(value: number, out: number[]): void {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  const bytes = new Uint8Array(view.buffer);
  if (bytes[0] & 0x80) { for (let i = 0; i < 8; i++) bytes[i] ^= 0xff; }
  else bytes[0] ^= 0x80;
  out.push(NUMBER, ...bytes);
}

export function encodeKey(key: StoreKey): Uint8Array {
  const out: number[] = [];
  const encoder = new TextEncoder();
  for (const part of key) {
    if (typeof part === "string") escaped(STRING, encoder.encode(part), out);
    else if (typeof part === "number") numberBytes(part, out);
    else if (part instanceof Uint8Array) escaped(BYTES, part, out);
    else throw new TypeError(`storage: a key part must be a string, number or Uint8Array`);
  }
  if (out.length > MAX_ENCODED_KEY_BYTES) {
    throw new TypeError(`storage: key too large (${out.length} bytes, at most 2048)`);
  }
  return new Uint8Array(out);
}

/** The parts `encodeKey` made these bytes from. */
export function decodeKey(bytes: Uint8Array): StoreKey {
  const parts: (string | number | Uint8Array)[] = [];
  const decoder = new TextDecoder();
  let i = 0;
  while (i < bytes.length) {
    const type = bytes[i++];
    if (type === NUMBER) {
      // A copy: a Buffer's slice is a view, and its buffer does not start at the key.
      const raw = Uint8Array.from(bytes.subarray(i, i + 8));
      if (raw[0] & 0x80) raw[0] ^= 0x80;
      else for (let j = 0; j < 8; j++) raw[j] ^= 0xff;
      parts.push(new DataView(raw.buffer).getFloat64(0));
      i += 8;
      continue;
    }
    const body: number[] = [];
    while (i < bytes.length) {
      const byte = bytes[i++];
      if (byte !== 0) body.push(byte);
      else if (bytes[i] === 0xff) body.push(0), i++;
      else break;
    }
    if (type === STRING) parts.push(decoder.decode(new Uint8Array(body)));
    else if (type === BYTES) parts.push(new Uint8Array(body));
    else throw new TypeError(`storage: a stored key has an unknown part type ${type}`);
  }
  return parts;
}

/** The smallest bytes above every key that starts with `prefix`'s parts. */
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  const end = new Uint8Array(prefix.length + 1);
  end.set(prefix);
  end[prefix.length] = PREFIX_END;
  return end;
}

export function encodeValue(value: unknown): Uint8Array {
  if (value === undefined) throw new TypeError("storage: cannot store undefined");
  const bytes = serialize(value);
  // Deno KV keeps a byte array as it is and anything else serialized: the limit counts those.
  const size = value instanceof Uint8Array ? value.length : bytes.length;
  if (size > MAX_VALUE_BYTES) {
    throw new TypeError(`storage: Value too large (${size} bytes, max ${MAX_VALUE_BYTES} bytes)`);
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function decodeValue<T>(bytes: Uint8Array): T {
  return deserialize(bytes) as T;
}
