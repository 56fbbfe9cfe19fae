import fs from 'node:fs/promises';
import type { Readable } from 'node:stream';

import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DirectoryFileStore, evidenceName, type FileStore, ObjectStorageError, STORED_OUTPUTS } from '../../server/store/file-store.js';
import { createS3Client } from '../../server/store/s3/s3-client.js';
import { S3FileStore } from '../../server/store/s3/s3-file-store.js';
import { startS3, type TestS3, useS3Credentials } from '../helpers/s3rver.js';
import { tempDir } from '../helpers/temp-dir.js';

// One suite, both files stores: a directory, and a bucket of a real S3 server (s3rver on
// 127.0.0.1) through the official SDK, as the service configures it.

let s3: TestS3;
const dirs: string[] = [];
/** S3's smallest part: an image above it goes up in parts. */
const PART = 5 * 1024 * 1024;

beforeAll(async () => {
  useS3Credentials();
  s3 = await startS3(['shots']);
});

afterAll(async () => {
  await s3?.close();
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
});

let n = 0;
const stores: Array<[string, () => Promise<FileStore>]> = [
  [
    'a directory',
    async () => {
      const dir = await tempDir('sa-files-');
      dirs.push(dir);
      const store = new DirectoryFileStore(dir);
      await store.init();
      return store;
    },
  ],
  [
    'object storage (s3rver)',
    async () => {
      const location = { bucket: 'shots', prefix: `suite-${++n}/`, endpoint: s3.endpoint };
      return new S3FileStore({ location, client: createS3Client(location), partSize: PART });
    },
  ],
];

async function png(width = 400, height = 300): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 90 } } }).png().toBuffer();
}

async function bytes(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

describe.each(stores)('the files store in %s', (_, open) => {
  let files: FileStore;
  beforeAll(async () => {
    files = await open();
  });

  it('stores an image and gives it back whole, with its size and time', async () => {
    const image = await png();
    const before = Date.now();
    await files.writeImage('abc.png', image);
    const stored = await files.image('abc.png');
    expect(stored?.size).toBe(image.length);
    // Object storage keeps whole seconds.
    expect(stored!.lastModified.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
    expect(await bytes(await stored!.open())).toEqual(image);
    expect(await files.readImage('abc.png')).toEqual(image);
  });

  it('reads a byte range of an image: the first bytes, the middle, the last byte', async () => {
    const image = await png(800, 600);
    await files.writeImage('range.png', image);
    const stored = (await files.image('range.png'))!;
    for (const range of [{ start: 0, end: 99 }, { start: 1000, end: 1999 }, { start: image.length - 1, end: image.length - 1 }]) {
      expect(await bytes(await stored.open(range))).toEqual(image.subarray(range.start, range.end + 1));
    }
  });

  it('stores a large image whole (object storage: in parts) and reads its end', async () => {
    const image = Buffer.alloc(2 * PART + 12345);
    for (let i = 0; i < image.length; i += 4096) image.writeUInt32BE(i, i);
    await files.writeImage('large.png', image);
    const stored = (await files.image('large.png'))!;
    expect(stored.size).toBe(image.length);
    expect((await files.readImage('large.png'))!.equals(image)).toBe(true);
    expect(await bytes(await stored.open({ start: image.length - 5000, end: image.length - 1 }))).toEqual(image.subarray(image.length - 5000));
  });

  it('answers null for what is not there, and removing it is no error', async () => {
    expect(await files.image('none.png')).toBeNull();
    expect(await files.readImage('none.png')).toBeNull();
    expect(await files.readSource('no-job')).toBeNull();
    for (const output of STORED_OUTPUTS) expect(await files.readOutput('no-job', output)).toBeNull();
    expect(await files.readThumbnail('none.png')).toBeNull();
    await files.remove('none.png', 'no-job');
    await files.removeMany([{ image: 'none.png', jobId: 'no-job' }, { jobId: 'other' }]);
  });

  it('makes the thumbnail from the image on first read, and keeps it', async () => {
    await files.writeImage('thumb.png', await png(1920, 1080));
    const first = await files.readThumbnail('thumb.png');
    expect(first).not.toBeNull();
    const meta = await sharp(first!).metadata();
    expect(meta).toMatchObject({ format: 'webp', width: 320 });
    expect(await files.readThumbnail('thumb.png')).toEqual(first);
    const made = await files.writeThumbnail('other.jpg', await png(640, 480));
    expect(await files.readThumbnail('other.jpg')).toEqual(made);
  });

  it('stores page sources and outputs, text exactly', async () => {
    const html = '<!doctype html><title>é ✓</title><p>hello</p>';
    await files.writeSource('job1', html);
    expect(await files.readSource('job1')).toBe(html);
    await files.writeOutput('job1', 'markdown', '# Title\n\né');
    await files.writeOutput('job1', 'text', 'plain ✓');
    await files.writeOutput('job1', 'links', '[{"url":"https://example.com/"}]');
    expect(await files.readOutput('job1', 'markdown')).toBe('# Title\n\né');
    expect(await files.readOutput('job1', 'text')).toBe('plain ✓');
    expect(await files.readOutput('job1', 'links')).toBe('[{"url":"https://example.com/"}]');
  });

  it("removes a job's image, thumbnail, evidence bundle, page source and outputs, and nothing of another job", async () => {
    for (const job of ['gone', 'kept']) {
      await files.writeImage(`${job}.png`, await png());
      await files.writeImage(evidenceName(`${job}.png`), Buffer.from('PK bundle'));
      await files.writeThumbnail(`${job}.png`, await png());
      await files.writeSource(job, '<p>x</p>');
      for (const output of STORED_OUTPUTS) await files.writeOutput(job, output, 'x');
    }
    await files.remove('gone.png', 'gone');
    expect(await files.image('gone.png')).toBeNull();
    expect(await files.image(evidenceName('gone.png'))).toBeNull();
    expect(await files.readSource('gone')).toBeNull();
    for (const output of STORED_OUTPUTS) expect(await files.readOutput('gone', output)).toBeNull();
    // The thumbnail went too: without an image none is made again.
    expect(await files.readThumbnail('gone.png')).toBeNull();
    expect(await files.image('kept.png')).not.toBeNull();
    expect(await files.readImage(evidenceName('kept.png'))).toEqual(Buffer.from('PK bundle'));
    expect(await files.readSource('kept')).toBe('<p>x</p>');
  });

  it('removes one image and its thumbnail alone (a monitor\'s diff picture), and reads an image whole', async () => {
    const image = await png();
    for (const name of ['diff-gone.png', 'diff-kept.png']) {
      await files.writeImage(name, image);
      await files.writeThumbnail(name, image);
    }
    expect(await files.readImage('diff-gone.png')).toEqual(image);
    await files.removeImage('diff-gone.png');
    await files.removeImage('never-stored.png');
    expect(await files.readImage('diff-gone.png')).toBeNull();
    expect(await files.readThumbnail('diff-gone.png')).toBeNull();
    expect(await files.readImage('diff-kept.png')).toEqual(image);
  });

  it('removes the files of many jobs at once (object storage: more keys than one request takes)', async () => {
    // 200 jobs of 7 keys each: two DeleteObjects requests.
    const jobs = Array.from({ length: 200 }, (_, i) => ({ image: `many${i}.png`, jobId: `many${i}` }));
    const image = await png(10, 10);
    await Promise.all(jobs.slice(0, 40).map((job) => Promise.all([files.writeImage(job.image, image), files.writeSource(job.jobId, 's')])));
    await files.removeMany(jobs);
    for (const job of jobs.slice(0, 40)) {
      expect(await files.image(job.image)).toBeNull();
      expect(await files.readSource(job.jobId)).toBeNull();
    }
  });

  it("keeps the cluster's marker: written, read back, removed", async () => {
    const markers = files.markers();
    expect(await markers.read('.cluster-files-x')).toBeNull();
    await markers.write('.cluster-files-x', 'content');
    expect(await markers.read('.cluster-files-x')).toBe('content');
    await markers.remove('.cluster-files-x');
    expect(await markers.read('.cluster-files-x')).toBeNull();
  });

  it('says it is usable', async () => {
    const health = await files.health();
    expect(Object.values(health.parts).every((state) => state === 'ok')).toBe(true);
  });
});

describe('the files store in object storage', () => {
  it('keys the objects under the prefix as the directories name the files', async () => {
    const location = { bucket: 'shots', prefix: 'keys/deep/', endpoint: s3.endpoint };
    const files = new S3FileStore({ location, client: createS3Client(location) });
    await files.writeImage('img.jpg', await png());
    await files.writeThumbnail('img.jpg', await png());
    await files.writeSource('job9', '<p>');
    for (const output of STORED_OUTPUTS) await files.writeOutput('job9', output, 'x');
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: 'shots', Prefix: 'keys/' }));
    expect((listed.Contents ?? []).map((o) => o.Key).sort()).toEqual(
      ['files/img.jpg', 'sources/job9.html', 'sources/job9.links.json', 'sources/job9.md', 'sources/job9.txt', 'thumbnails/img.webp'].map((k) => `keys/deep/${k}`),
    );
  });

  it('fails a write with the bucket and what it answered when the storage is down, and works again once it is back', async () => {
    const location = { bucket: 'shots', prefix: 'down/', endpoint: s3.endpoint };
    const observed: Array<[string, boolean]> = [];
    const files = new S3FileStore({ location, client: createS3Client(location, (operation, _seconds, failed) => observed.push([operation, failed])) });
    await s3.stop();
    try {
      const error = await files.writeImage('x.png', await png()).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ObjectStorageError);
      expect((error as Error).message).toBe('shots answered nothing (ECONNREFUSED)');
      expect((await files.health()).parts.bucket).toBe('unreachable (ECONNREFUSED)');
      await expect(files.image('x.png')).rejects.toBeInstanceOf(ObjectStorageError);
    } finally {
      await s3.start();
    }
    await files.writeImage('x.png', await png());
    expect((await files.image('x.png'))?.size).toBeGreaterThan(0);
    expect(observed).toContainEqual(['PutObject', true]);
    expect(observed).toContainEqual(['PutObject', false]);
    // An object that is not there is an answer, not a failure.
    await files.image('absent.png');
    expect(observed).toContainEqual(['HeadObject', false]);
  });

  it('answers with the status and code of a refusal: a bucket that does not exist', async () => {
    const location = { bucket: 'no-such-bucket', prefix: '', endpoint: s3.endpoint };
    const files = new S3FileStore({ location, client: createS3Client(location) });
    const error = await files.writeImage('x.png', await png()).catch((err: unknown) => err);
    expect((error as Error).message).toBe('no-such-bucket answered 404 NoSuchBucket');
    expect((await files.health()).parts.bucket).toMatch(/^answering 404/);
  });

  it('gives a presigned address of an image that fetches its bytes, when asked to', async () => {
    const location = { bucket: 'shots', prefix: 'signed/', endpoint: s3.endpoint };
    const plain = new S3FileStore({ location, client: createS3Client(location) });
    expect(await plain.presignedImageUrl('a.png')).toBeNull();
    const signed = new S3FileStore({ location, client: createS3Client(location), presignSeconds: 60 });
    const image = await png();
    await signed.writeImage('a.png', image);
    const url = await signed.presignedImageUrl('a.png');
    expect(url).toMatch(/X-Amz-Expires=60/);
    const res = await fetch(url!);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(image);
  });
});
