/**
 * The size of a PNG in pixels, from its IHDR chunk: the format puts it first, after the 8-byte
 * signature and the chunk's length and type, so the size is read without decoding anything.
 */
export function pngSize(png: Buffer): { width: number; height: number } {
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}
