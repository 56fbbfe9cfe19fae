import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';

import tar from 'tar-stream';

/** One regular file of an archive. */
export interface TarEntry {
  /** A relative path with `/` separators; a long or non-ASCII one is kept in a PAX header. */
  name: string;
  mode: number;
  mtime: Date;
  data: Buffer;
}

/**
 * Writes the entries as a gzip-compressed tar file (POSIX ustar, with PAX headers for names
 * ustar cannot hold; readable by `tar xzf`). An entry is written once the archive took the one
 * before: memory holds the entry being written, not the archive.
 */
export async function writeTarGz(file: string, entries: AsyncIterable<TarEntry>): Promise<void> {
  const pack = tar.pack();
  const written = pipeline(pack, createGzip(), fs.createWriteStream(file, { mode: 0o600 }));
  try {
    for await (const { name, mode, mtime, data } of entries) {
      await new Promise<void>((resolve, reject) => {
        pack.entry({ name, mode, mtime, size: data.length, type: 'file' }, data, (err) => (err ? reject(err) : resolve()));
      });
    }
    pack.finalize();
  } catch (err) {
    pack.destroy(err as Error);
  }
  await written;
}

/** What is wrong with an archive being read: its own findings, or tar-stream's and zlib's as its cause. */
export class TarError extends Error {
  override readonly name = 'TarError';
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
 * The regular files of a gzip-compressed tar file, in order, streamed: memory stays at a few
 * chunks whatever the files' sizes, and a size a header declares is never allocated (a crafted
 * header only fails once the bytes it promises do not come). A link, a folder or any other
 * entry but a regular file, a damaged header or an archive cut short throws; the names are the
 * caller's to check.
 */
export async function* readTarGz(file: string): AsyncGenerator<TarSource> {
  const extract = tar.extract();
  // Errors reach the entries through `extract`, which the iteration below rethrows.
  const input = pipeline(fs.createReadStream(file), createGunzip(), extract).catch((err: Error) => extract.destroy(err));
  try {
    for await (const entry of extract) {
      const { name, mode, mtime, size } = entry.header;
      // null for a type tar-stream does not know (its types leave that out).
      const type: string | null = entry.header.type;
      if (type !== 'file') throw new TarError(`${name}: a ${type ?? 'special'} entry; only regular files are restored`);
      let reading = false;
      let consumed = 0;
      const chunks = async function* (): AsyncGenerator<Buffer> {
        if (reading) throw new TarError(`${name}: its bytes were read already`);
        reading = true;
        try {
          for await (const chunk of entry as AsyncIterable<Buffer>) {
            consumed += chunk.length;
            yield chunk;
          }
        } catch (err) {
          if (consumed < size) throw new TarError(`${name}: the archive is cut short`, { cause: err });
          throw err;
        }
        if (consumed < size) throw new TarError(`${name}: the archive is cut short`);
      };
      yield {
        name,
        mode,
        mtime,
        size,
        chunks,
        read: async (maxBytes: number) => {
          if (size > maxBytes) throw new TarError(`${name} declares ${size} bytes, more than the ${maxBytes} it may hold`);
          const parts: Buffer[] = [];
          for await (const chunk of chunks()) parts.push(chunk);
          return Buffer.concat(parts, size);
        },
      };
      // What the reader left of the file's bytes is skipped.
      if (!reading) for await (const _ of chunks()) void _;
    }
  } catch (err) {
    if (err instanceof TarError) throw err;
    throw new TarError(`a damaged archive: ${(err as Error).message}`, { cause: err });
  } finally {
    extract.destroy();
    await input;
  }
}
