import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';

import tar from 'tar-stream';
import { afterAll, describe, expect, it } from 'vitest';

import { backupDataDir, restoreDataDir } from '../../server/cli/backup.js';
import { readTarGz } from '../../server/cli/tar.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sa-backup-archive-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
});

/** A data directory as a stopped server leaves it: its datastores, an image, a page source. */
async function dataDir(files: Record<string, Buffer | string>): Promise<string> {
  const dir = await tempDir();
  await fs.writeFile(path.join(dir, 'jobs.db'), '{"_id":"j1","status":"completed"}\n');
  for (const [name, data] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await fs.writeFile(path.join(dir, name), data);
  }
  return dir;
}

/** A ustar header for a regular file `name` declaring `size` bytes (octal, as tar writes it). */
function header(name: string, size: number): Buffer {
  const block = Buffer.alloc(512);
  block.write(name, 0, 'utf8');
  block.write('0000600\0', 100, 'ascii');
  block.write('0000000\0', 108, 'ascii');
  block.write('0000000\0', 116, 'ascii');
  block.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
  block.write(`${Math.floor(Date.now() / 1000).toString(8).padStart(11, '0')}\0`, 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write('0', 156, 'ascii');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  return withChecksum(block);
}

function withChecksum(block: Buffer): Buffer {
  block.write('        ', 148, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

async function archiveOf(...parts: Buffer[]): Promise<string> {
  const file = path.join(await tempDir(), 'crafted.tar.gz');
  await fs.writeFile(file, zlib.gzipSync(Buffer.concat(parts), { level: 1 }));
  return file;
}

/** An archive written by tar-stream itself, entry by entry, as another tool would. */
async function packed(entries: Array<{ header: Partial<tar.Header> & { name: string }; data?: string }>): Promise<string> {
  const file = path.join(await tempDir(), 'packed.tar.gz');
  const pack = tar.pack();
  const written = pipeline(pack, zlib.createGzip(), (await fs.open(file, 'w')).createWriteStream());
  for (const { header: h, data } of entries) pack.entry(h, data ?? '');
  pack.finalize();
  await written;
  return file;
}

/** Where a restore that must fail was pointed: nothing may be left in it. */
async function refused(archive: string): Promise<{ message: string; left: string[] }> {
  const target = path.join(await tempDir(), 'restored');
  const message = await restoreDataDir(archive, target).then(
    () => 'restored',
    (err: Error) => err.message,
  );
  return { message, left: await fs.readdir(target) };
}

describe('backup archives', () => {
  // ustar holds 100 bytes of a name after its last `/`: the archive keeps this one in a PAX header.
  const longName = `${'i'.repeat(150)}.png`;

  it('backs up and restores a file whose name is longer than 100 bytes', async () => {
    const image = crypto.randomBytes(70_000);
    const source = await dataDir({ [`files/${longName}`]: image, 'sources/j1.html': '<p>hi</p>' });
    const archive = path.join(await tempDir(), 'data.tar.gz');

    const summary = await backupDataDir(source, archive);
    expect(summary.files).toBe(3);

    const target = path.join(await tempDir(), 'restored');
    expect(await restoreDataDir(archive, target)).toEqual({ files: 3, bytes: summary.bytes });
    expect((await fs.readFile(path.join(target, 'files', longName))).equals(image)).toBe(true);
    expect(await fs.readFile(path.join(target, 'sources', 'j1.html'), 'utf8')).toBe('<p>hi</p>');
  });

  it('keeps a name that is not ASCII as it was', async () => {
    const name = 'files/capture-\u00e9t\u00e9-\u{1F4F7}.png';
    const archive = path.join(await tempDir(), 'data.tar.gz');
    await backupDataDir(await dataDir({ [name]: 'x' }), archive);
    const names: string[] = [];
    for await (const entry of readTarGz(archive)) names.push(entry.name);
    expect(names).toEqual(['jobs.db', name, 'backup.json']);
  });

  it('streams each entry: a reader that skips a file still gets the next one', async () => {
    const big = crypto.randomBytes(3 * 1024 * 1024);
    const archive = path.join(await tempDir(), 'data.tar.gz');
    await backupDataDir(await dataDir({ 'files/a.bin': big, 'files/b.bin': 'after' }), archive);
    const seen: Record<string, number> = {};
    let chunks = 0;
    for await (const entry of readTarGz(archive)) {
      seen[entry.name] = entry.size;
      if (entry.name === 'files/b.bin') expect((await entry.read(10)).toString()).toBe('after');
      if (entry.name === 'jobs.db') for await (const _ of entry.chunks()) chunks++;
    }
    expect(seen).toMatchObject({ 'files/a.bin': big.length, 'files/b.bin': 5 });
    expect(chunks).toBeGreaterThan(0);
  });
});

describe('restore of hostile archives', () => {
  it('refuses an entry named ../x, and leaves nothing behind (nor outside)', async () => {
    const archive = await packed([
      { header: { name: 'jobs.db' }, data: '' },
      { header: { name: '../x' }, data: 'escaped' },
    ]);
    const { message, left } = await refused(archive);
    expect(message).toBe('the archive holds an unexpected file: ../x');
    expect(left).toEqual([]);
    await expect(fs.access(path.join(path.dirname(archive), 'x'))).rejects.toThrow();
  });

  it('refuses an absolute name', async () => {
    const { message } = await refused(await packed([{ header: { name: '/tmp/sa-absolute' }, data: 'x' }]));
    expect(message).toBe('the archive holds an unexpected file: /tmp/sa-absolute');
  });

  it('refuses a symbolic link, and leaves nothing behind', async () => {
    const archive = await packed([
      { header: { name: 'jobs.db' }, data: '' },
      { header: { name: 'files/link.png', type: 'symlink', linkname: '/etc/passwd' } },
    ]);
    const { message, left } = await refused(archive);
    expect(message).toMatch(/files\/link\.png: a symlink entry; only regular files are restored$/);
    expect(left).toEqual([]);
  });

  it('refuses a hard link', async () => {
    const archive = await packed([
      { header: { name: 'jobs.db' }, data: '' },
      { header: { name: 'files/hard.png', type: 'link', linkname: 'jobs.db' } },
    ]);
    expect((await refused(archive)).message).toMatch(/files\/hard\.png: a link entry; only regular files are restored$/);
  });

  it('refuses a file declaring more bytes than the archive holds, and leaves nothing behind', async () => {
    const { message, left } = await refused(await archiveOf(header('jobs.db', 0), header('files/x.png', 10_000), Buffer.alloc(1024, 1)));
    expect(message).toMatch(/files\/x\.png: the archive is cut short$/);
    expect(left).toEqual([]);
  });

  it('refuses a manifest declaring more than a manifest may hold, before reading (or allocating) its bytes', async () => {
    // 80 MB of zeros: a small archive whose manifest would have to be held whole.
    const declared = 80 * 1024 * 1024;
    const archive = await archiveOf(header('jobs.db', 0), header('backup.json', declared), Buffer.alloc(declared), Buffer.alloc(1024));
    const { message, left } = await refused(archive);
    expect(message).toMatch(new RegExp(`backup\\.json declares ${declared} bytes, more than the \\d+ it may hold`));
    expect(left).toEqual([]);
  });

  it('refuses a file declaring the largest size an octal header can hold with a few bytes behind it', async () => {
    const { message, left } = await refused(await archiveOf(header('files/big.png', 8 * 1024 ** 3 - 1), Buffer.alloc(4096, 1)));
    expect(message).toMatch(/files\/big\.png: the archive is cut short$/);
    expect(left).toEqual([]);
  });

  it('refuses a size written in base-256 (2^72 bytes) once its bytes do not come, without allocating it', async () => {
    const block = header('files/x.png', 0);
    block.fill(0, 124, 136);
    block[124] = 0x80;
    block[126] = 0x01;
    const { message, left } = await refused(await archiveOf(withChecksum(block), Buffer.alloc(4096, 1)));
    expect(message).toMatch(/files\/x\.png: the archive is cut short$/);
    expect(left).toEqual([]);
  });

  it('refuses a header whose checksum does not match as a damaged archive', async () => {
    const block = header('files/x.png', 0);
    block[0] = 'g'.charCodeAt(0);
    const { message } = await refused(await archiveOf(block, Buffer.alloc(1024)));
    expect(message).toMatch(/a damaged archive: Invalid tar header/);
  });

  it('refuses a file that is not gzip-compressed', async () => {
    const file = path.join(await tempDir(), 'plain.tar');
    await fs.writeFile(file, Buffer.concat([header('jobs.db', 0), Buffer.alloc(1024)]));
    expect((await refused(file)).message).toMatch(/a damaged archive: incorrect header check/);
  });
});
