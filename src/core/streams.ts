/** Reading byte streams of unknown length without trusting them to be small. */

/**
 * Reads `stream` to its end; undefined (and the stream cancelled) as soon as it passes
 * `maxBytes`, so an oversized body is never held in memory whole.
 */
export async function readAllCapped(
  stream: ReadableStream<Uint8Array> | null | undefined,
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  if (!stream) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return concatBytes(chunks, size);
}

/** The parts one after another in one array (the part itself when there is only one). */
export function concatBytes(parts: Uint8Array[], total?: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const all = new Uint8Array(total ?? parts.reduce((sum, part) => sum + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.byteLength;
  }
  return all;
}
