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
const number = (block: Buffer, start: number, length: number) => parseInt(field(block, start, length).trim() || '0', 8);

/**
 * The regular files of a gzip-compressed tar file, in order. Anything but a regular file, a
 * damaged header or an archive cut short throws.
 */
export async function* readTarGz(file: string): AsyncGenerator<TarEntry> {
  let buffered = Buffer.alloc(0);
  let ended = false;
  const input = fs.createReadStream(file).pipe(createGunzip());
  const chunks = input[Symbol.asyncIterator]();
  const need = async (bytes: number): Promise<boolean> => {
    while (buffered.length < bytes) {
      const next = await chunks.next();
      if (next.done) return false;
      buffered = Buffer.concat([buffered, next.value as Buffer]);
    }
    return true;
  };
  const take = (bytes: number) => {
    const out = buffered.subarray(0, bytes);
    buffered = buffered.subarray(bytes);
    return out;
  };
  while (!ended) {
    if (!(await need(BLOCK))) throw new Error('the archive ends without its closing blocks');
    const block = take(BLOCK);
    if (block.every((b) => b === 0)) {
      ended = true;
      break;
    }
    let sum = 0;
    for (let k = 0; k < BLOCK; k++) sum += k >= 148 && k < 156 ? 32 : block[k];
    if (sum !== number(block, 148, 8)) throw new Error('a damaged header in the archive');
    const type = field(block, 156, 1);
    const name = field(block, 0, 100);
    if (type !== '0' && type !== '') throw new Error(`${name}: only regular files are restored`);
    const size = number(block, 124, 12);
    const padded = size + ((BLOCK - (size % BLOCK)) % BLOCK);
    if (!(await need(padded))) throw new Error(`${name}: the archive is cut short`);
    const data = Buffer.from(take(padded).subarray(0, size));
    yield { name, mode: number(block, 100, 8), mtime: new Date(number(block, 136, 12) * 1000), data };
  }
}
