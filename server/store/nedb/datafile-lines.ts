import fs from 'node:fs/promises';

const NEWLINE = 0x0a;
const CHUNK = 1 << 20;

/**
 * Calls `onLine` with each line of the file: a buffer, the range of the line in it without its
 * newline, and whether it is the end of a line the file stops in the middle of. The buffer is
 * reused: what `onLine` keeps of it must be copied.
 */
export async function eachLine(filename: string, onLine: (buf: Buffer, start: number, end: number, midLine: boolean) => void): Promise<void> {
  const input = await fs.open(filename, 'r');
  try {
    let buf = Buffer.allocUnsafe(CHUNK);
    /** Bytes at the start of buf carried over from the last read: the beginning of a line. */
    let carried = 0;
    for (;;) {
      if (carried === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)]);
      const { bytesRead } = await input.read(buf, carried, buf.length - carried, null);
      if (bytesRead === 0) break;
      const filled = carried + bytesRead;
      let start = 0;
      for (let nl = buf.indexOf(NEWLINE, carried); nl !== -1 && nl < filled; nl = buf.indexOf(NEWLINE, start)) {
        onLine(buf, start, nl, false);
        start = nl + 1;
      }
      buf.copyWithin(0, start, filled);
      carried = filled - start;
    }
    // The end of a line NeDB was writing when it stopped.
    if (carried > 0) onLine(buf, 0, carried, true);
  } finally {
    await input.close();
  }
}
