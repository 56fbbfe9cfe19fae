import { once } from 'node:events';
import fs from 'node:fs';
import { createGunzip, createGzip } from 'node:zlib';

/** One regular file of an archive. */
export interface TarEntry {
  /** A relative path with `/` separators, at most 100 bytes. */
  name: string;
  mode: number;
  mtime: Date;
  data: Buffer;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

/** A POSIX ustar header for a regular file. */
function header(entry: TarEntry): Buffer {
  const name = Buffer.from(entry.name, 'utf8');
  if (name.length > 100) throw new Error(`${entry.name}: names longer than 100 bytes are not archived`);
  const block = Buffer.alloc(BLOCK);
  name.copy(block, 0);
  block.write(octal(entry.mode & 0o7777, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(entry.data.length, 12), 124, 'ascii');
  block.write(octal(Math.floor(entry.mtime.getTime() / 1000), 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write('0', 156, 'ascii');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(sum, 7) + ' ', 148, 'ascii');
  return block;
}

/** Writes the entries as a gzip-compressed tar file (readable by `tar xzf`). */
export async function writeTarGz(file: string, entries: AsyncIterable<TarEntry>): Promise<void> {
  const gzip = createGzip();
  const out = fs.createWriteStream(file, { mode: 0o600 });
  const done = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
    gzip.on('error', reject);
  });
  gzip.pipe(out);
  const write = async (chunk: Buffer) => {
    if (!gzip.write(chunk)) await once(gzip, 'drain');
  };
  for await (const entry of entries) {
    await write(header(entry));
    await write(entry.data);
    const pad = (BLOCK - (entry.data.length % BLOCK)) % BLOCK;
    if (pad) await write(Buffer.alloc(pad));
  }
  await write(Buffer.alloc(BLOCK * 2));
  gzip.end();
  await done;
}

const field = (block: Buffer, start: number, length: number) => block.subarray(start, start + length).toString('utf8').replace(/\0.*$/s, '');

/** An octal number field; anything else (base-256 sizes, stray characters) is a damaged header. */
function number(block: Buffer, start: number, length: number): number {
  const text = field(block, start, length).trim();
  if (!/^[0-7]*$/.test(text)) throw new Error('a damaged header in the archive');
  return parseInt(text || '0', 8);
}

/** One regular file of an archive being read: its header now, its bytes as they come. */
export interface TarSource {
  name: string;
  mode: number;
  mtime: Date;
  /** The size its header declares; nothing is allocated for it up front. */
  size: number;
  /** The file's bytes, chunk by chunk, as they are decompressed; read once, before the next entry. */
  chunks(): AsyncGenerator<Buffer>;
  /** The file's bytes whole; throws, before reading any, when it declares more than `maxBytes`. */
  read(maxBytes: number): Promise<Buffer>;
}

/**
 * The decompressed bytes as a queue of the chunks zlib gave, read from the front: no chunk is
 * copied but to join a header that spans two of them, so reading costs what the bytes do.
 */
class ChunkQueue {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly source: AsyncIterator<Buffer>) {}

  /** Pulls chunks until `bytes` are buffered; false when the input ends first. */
  private async fill(bytes: number): Promise<boolean> {
    while (this.buffered < bytes) {
      const next = await this.source.next();
      if (next.done) return false;
      this.chunks.push(next.value);
      this.buffered += next.value.length;
    }
    return true;
  }

  /** Exactly `bytes` (a header, a padding: small), or null when the input ends first. */
  async take(bytes: number): Promise<Buffer | null> {
    if (!(await this.fill(bytes))) return null;
    const parts: Buffer[] = [];
    let left = bytes;
    while (left > 0) {
      const piece = this.front(left);
      parts.push(piece);
      left -= piece.length;
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts, bytes);
  }

  /** The next `bytes`, chunk by chunk; throws `short` when the input ends first. */
  async *stream(bytes: number, short: string): AsyncGenerator<Buffer> {
    let left = bytes;
    while (left > 0) {
      if (this.buffered === 0 && !(await this.fill(1))) throw new Error(short);
      const piece = this.front(left);
      left -= piece.length;
      yield piece;
    }
  }

  /** Up to `bytes` from the first chunk, removed from the queue. */
  private front(bytes: number): Buffer {
    const first = this.chunks[0];
    if (first.length <= bytes) {
      this.chunks.shift();
      this.buffered -= first.length;
      return first;
    }
    this.chunks[0] = first.subarray(bytes);
    this.buffered -= bytes;
    return first.subarray(0, bytes);
  }
}

/**
 * The regular files of a gzip-compressed tar file, in order, streamed: memory stays at a few
 * chunks whatever the files' sizes, and a size a header declares is never allocated (a crafted
 * header only fails once the bytes it promises do not come). Anything but a regular file, a
 * damaged header or an archive cut short throws.
 */
export async function* readTarGz(file: string): AsyncGenerator<TarSource> {
  const input = fs.createReadStream(file).pipe(createGunzip());
  const queue = new ChunkQueue(input[Symbol.asyncIterator]());
  try {
    for (;;) {
      const block = await queue.take(BLOCK);
      if (!block) throw new Error('the archive ends without its closing blocks');
      if (block.every((b) => b === 0)) return;
      let sum = 0;
      for (let k = 0; k < BLOCK; k++) sum += k >= 148 && k < 156 ? 32 : block[k];
      if (sum !== number(block, 148, 8)) throw new Error('a damaged header in the archive');
      const type = field(block, 156, 1);
      const name = field(block, 0, 100);
      if (type !== '0' && type !== '') throw new Error(`${name}: only regular files are restored`);
      const size = number(block, 124, 12);
      const short = `${name}: the archive is cut short`;
      let reading = false;
      let consumed = 0;
      const chunks = async function* () {
        if (reading) throw new Error(`${name}: its bytes were read already`);
        reading = true;
        for await (const chunk of queue.stream(size, short)) {
          consumed += chunk.length;
          yield chunk;
        }
      };
      yield {
        name,
        mode: number(block, 100, 8),
        mtime: new Date(number(block, 136, 12) * 1000),
        size,
        chunks,
        read: async (maxBytes: number) => {
          if (size > maxBytes) throw new Error(`${name} declares ${size} bytes, more than the ${maxBytes} it may hold`);
          const parts: Buffer[] = [];
          for await (const chunk of chunks()) parts.push(chunk);
          return Buffer.concat(parts, size);
        },
      };
      // What the reader left of the file's bytes is skipped, then its padding.
      for await (const _ of queue.stream(size - consumed, short)) {
        // skipped
      }
      const pad = (BLOCK - (size % BLOCK)) % BLOCK;
      if (pad && !(await queue.take(pad))) throw new Error(short);
    }
  } finally {
    input.destroy();
  }
}
