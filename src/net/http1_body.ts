/**
 * An answer's body as a stream read off its connection as the consumer pulls: chunked, of a
 * declared length, or up to the end of the connection; decompressed when the backend encoded it.
 */
import { type Connection, readLine } from "./http1_connection.ts";
import type { Head } from "./http1_wire.ts";

/**
 * Compressed input is fed to the decompressor in slices this small: deflate expands a byte to
 * at most about a thousand, so no decompressed chunk passes about 1 MiB, however small the
 * answer was on the wire (a 64 KiB read of a gzip bomb would otherwise come out as 64 MiB at once).
 */
const DECOMPRESS_SLICE_BYTES = 1024;

/**
 * `finish(reusable)` is called once when the body has been read to its end (`true`: the
 * connection may carry another request) or abandoned (`false`: it must be closed).
 */
export function bodyStream(
  connection: Connection,
  head: Head,
  finish: (reusable: boolean) => void,
  abortReason: () => unknown,
): ReadableStream<Uint8Array<ArrayBuffer>> {
  let remaining = head.length ?? Infinity;
  let chunkLeft = 0;
  let done = false;
  const end = (reusable: boolean) => {
    done = true;
    finish(reusable);
  };
  // Bytes of the body already in the buffer come first; then what the socket brings.
  const take = async (max: number): Promise<Uint8Array<ArrayBuffer> | null> => {
    if (connection.start === connection.end && !(await connection.fill(Infinity))) return null;
    const size = Math.min(max, connection.end - connection.start);
    const bytes = connection.buffer.slice(connection.start, connection.start + size);
    connection.start += size;
    return bytes;
  };
  const nextChunked = async (): Promise<Uint8Array<ArrayBuffer> | null> => {
    while (chunkLeft === 0) {
      const line = await readLine(connection);
      const size = parseInt(line.split(";")[0].trim(), 16);
      if (!Number.isFinite(size) || size < 0 || !/^[0-9a-fA-F]/.test(line)) {
        throw new TypeError("the backend's chunked answer is malformed");
      }
      if (size === 0) {
        // Trailers, if any, end with an empty line.
        while ((await readLine(connection)) !== "");
        return null;
      }
      chunkLeft = size;
    }
    const bytes = await take(chunkLeft);
    if (!bytes) {
      throw new TypeError("the backend closed the connection in the middle of its answer");
    }
    chunkLeft -= bytes.length;
    if (chunkLeft === 0) await readLine(connection);
    return bytes;
  };
  return new ReadableStream<Uint8Array<ArrayBuffer>>({
    pull: async (controller) => {
      try {
        if (head.chunked) {
          const bytes = await nextChunked();
          if (bytes) return controller.enqueue(bytes);
          end(true);
          return controller.close();
        }
        if (remaining === 0) {
          end(true);
          return controller.close();
        }
        const bytes = await take(remaining);
        if (!bytes) {
          if (head.length !== undefined) {
            throw new TypeError("the backend's answer was cut short");
          }
          end(false);
          return controller.close();
        }
        remaining -= bytes.length;
        controller.enqueue(bytes);
        if (remaining === 0) {
          end(true);
          controller.close();
        }
      } catch (error) {
        end(false);
        controller.error(abortReason() ?? error);
      }
    },
    cancel: () => {
      if (!done) end(false);
    },
  });
}

/** The body decompressed, in chunks of bounded size (see DECOMPRESS_SLICE_BYTES). */
export function decode(
  body: ReadableStream<Uint8Array<ArrayBuffer>>,
  encoding: string,
): ReadableStream<Uint8Array<ArrayBuffer>> {
  const format = encoding === "gzip" || encoding === "x-gzip"
    ? "gzip"
    : encoding === "deflate"
    ? "deflate"
    : undefined;
  if (!format) {
    throw new TypeError(`the backend answered with an unsupported Content-Encoding: ${encoding}`);
  }
  const slices = new TransformStream<Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>>({
    transform(chunk, controller) {
      for (let at = 0; at < chunk.length; at += DECOMPRESS_SLICE_BYTES) {
        controller.enqueue(chunk.subarray(at, at + DECOMPRESS_SLICE_BYTES));
      }
    },
  });
  return body.pipeThrough(slices).pipeThrough(new DecompressionStream(format));
}
