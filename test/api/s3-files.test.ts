import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startS3, type TestS3, useS3Credentials } from '../helpers/s3rver.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

// The service with its files in a real S3 server (s3rver on 127.0.0.1): screenshot_url streams
// the object, with ETag, 304 and Range; a bucket that stops answering fails jobs clearly and
// the service recovers by itself; retention deletes the objects; presigned addresses redirect.

let s3: TestS3;
let fixtures: FixtureServer;
let server: TestServer;
let key: string;

beforeAll(async () => {
  useS3Credentials();
  s3 = await startS3(['shots']);
  fixtures = await startFixtureServer();
  server = await startTestServer({ browsers: 1, objectStorage: { bucket: 'shots', prefix: 'svc/', endpoint: s3.endpoint } }, { firstSweepAfterMs: 3_600_000 });
  ({ key } = await server.account());
}, 60_000);

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
  await s3?.close();
});

async function capture(target: TestServer, apiKey: string, body: Record<string, unknown> = {}): Promise<any> {
  const res = await target.v1('POST', '/screenshot', apiKey, { url: `${fixtures.url}/small.html`, ...body });
  expect(res.status).toBe(201);
  return waitForJob(target, apiKey, ((await res.json()) as { job_id: string }).job_id);
}

const objectOf = (imageUrl: string) => `svc/files/${new URL(imageUrl).pathname.split('/').pop()}`;

async function object(objectKey: string): Promise<Buffer> {
  const answer = await s3.client.send(new GetObjectCommand({ Bucket: 'shots', Key: objectKey }));
  return Buffer.from(await answer.Body!.transformToByteArray());
}

async function metric(target: TestServer, line: RegExp): Promise<number> {
  const text = await (await fetch(`${target.url}/metrics`, { headers: { authorization: `Bearer ${target.srv.adminToken}` } })).text();
  return text
    .split('\n')
    .filter((l) => line.test(l))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

describe('screenshot_url with the files in object storage', () => {
  it('serves the stored object with its ETag, 304 for that ETag, and byte ranges (206, 416)', async () => {
    const job = await capture(server, key);
    expect(job.status).toBe('completed');
    const stored = await object(objectOf(job.screenshot_url));
    expect(stored.subarray(1, 4).toString()).toBe('PNG');
    // The page source is an object next to it.
    expect((await object(`svc/sources/${job.job_id}.html`)).toString()).toContain('<');

    const whole = await fetch(job.screenshot_url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('image/png');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(Number(whole.headers.get('content-length'))).toBe(stored.length);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(stored);
    const etag = whole.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{24}-[0-9a-z]+"$/);

    expect((await fetch(job.screenshot_url, { headers: { 'if-none-match': `W/${etag}` } })).status).toBe(304);

    const part = await fetch(job.screenshot_url, { headers: { range: 'bytes=0-99' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-99/${stored.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(stored.subarray(0, 100));

    const tail = await fetch(job.screenshot_url, { headers: { range: 'bytes=-10' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(stored.subarray(stored.length - 10));

    const beyond = await fetch(job.screenshot_url, { headers: { range: `bytes=${stored.length}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${stored.length}`);

    // An If-Range naming another version gets the whole image.
    const stale = await fetch(job.screenshot_url, { headers: { range: 'bytes=0-9', 'if-range': '"other"' } });
    expect(stale.status).toBe(200);
    expect(Buffer.from(await stale.arrayBuffer())).toEqual(stored);

    // The thumbnail is made from the object on first read and stored next to it.
    const thumbnail = await fetch(`${job.screenshot_url}/thumbnail`);
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers.get('content-type')).toBe('image/webp');
    const thumbKey = objectOf(job.screenshot_url).replace('/files/', '/thumbnails/').replace(/\.png$/, '.webp');
    expect(await object(thumbKey)).toEqual(Buffer.from(await thumbnail.arrayBuffer()));

    // Storage operations are timed by operation.
    expect(await metric(server, /^screenshot_storage_operation_duration_seconds_count\{operation="PutObject"\}/)).toBeGreaterThan(0);
    expect(await metric(server, /^screenshot_storage_operation_duration_seconds_count\{operation="HeadObject"\}/)).toBeGreaterThan(0);
  }, 60_000);

  it('fails a job clearly while the bucket does not answer, says /readyz is not ready, and recovers by itself once it is back', async () => {
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    await s3.stop();
    try {
      const failed = await capture(server, key);
      expect(failed).toMatchObject({ status: 'failed', error: 'Could not store the screenshot: shots answered nothing (ECONNREFUSED)' });
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(503);
      expect((await ready.json()).reasons).toContain('bucket in s3://shots/svc/ is unreachable (ECONNREFUSED)');
      expect(await metric(server, /^screenshot_jobs_failed_total\{failure_class="storage"\}/)).toBe(1);
      expect(await metric(server, /^screenshot_storage_errors_total\{operation="PutObject"\}/)).toBeGreaterThan(0);
    } finally {
      await s3.start();
    }
    // Nothing to restart: the next readiness check and the next job find the bucket again.
    await expect.poll(async () => (await fetch(`${server.url}/readyz`)).status, { timeout: 10_000 }).toBe(200);
    const done = await capture(server, key);
    expect(done.status).toBe('completed');
    expect((await fetch(done.screenshot_url)).status).toBe(200);
  }, 90_000);

  it('deletes the objects of a job past the retention period, and its screenshot_url answers 404', async () => {
    const job = await capture(server, key, { extract: ['markdown', 'text', 'links'] });
    expect(job.status).toBe('completed');
    const keys = [
      objectOf(job.screenshot_url),
      ...['html', 'md', 'txt', 'links.json'].map((ext) => `svc/sources/${job.job_id}.${ext}`),
    ];
    for (const k of keys) await s3.client.send(new HeadObjectCommand({ Bucket: 'shots', Key: k }));
    await server.srv.services.stores.jobs.update(job.job_id, { completed_at: Date.now() - 8 * 86_400_000 });
    expect(await server.srv.services.retention.sweep()).toBeGreaterThan(0);
    for (const k of keys) {
      const gone = await s3.client.send(new HeadObjectCommand({ Bucket: 'shots', Key: k })).catch((err: { $metadata?: { httpStatusCode?: number } }) => err);
      expect((gone as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode, k).toBe(404);
    }
    expect((await fetch(job.screenshot_url)).status).toBe(404);
    expect(await metric(server, /^screenshot_storage_operation_duration_seconds_count\{operation="DeleteObjects"\}/)).toBeGreaterThan(0);
  }, 60_000);
});

describe('screenshot_url redirecting to presigned addresses', () => {
  let signed: TestServer;
  let signedKey: string;
  beforeAll(async () => {
    signed = await startTestServer({ browsers: 1, objectStorage: { bucket: 'shots', prefix: 'signed/', endpoint: s3.endpoint, presignSeconds: 120 } });
    ({ key: signedKey } = await signed.account());
  }, 60_000);
  afterAll(async () => {
    await signed?.close();
  });

  it('answers 302 to a short-lived presigned GET of the object, only after the capability checks pass', async () => {
    const job = await capture(signed, signedKey);
    const res = await fetch(job.screenshot_url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const location = res.headers.get('location')!;
    expect(location.startsWith(`${s3.endpoint}/shots/signed/files/`)).toBe(true);
    expect(location).toMatch(/X-Amz-Expires=120/);
    const followed = await fetch(location);
    expect(followed.status).toBe(200);
    expect(Buffer.from(await followed.arrayBuffer())).toEqual(await object(`signed/files/${new URL(job.screenshot_url).pathname.split('/').pop()}`));

    // A name no job holds, and a job past its retention: 404, never a redirect.
    const unknown = await fetch(`${signed.url}/v1/files/${'A'.repeat(24)}.png`, { redirect: 'manual' });
    expect(unknown.status).toBe(404);
    await signed.srv.services.stores.jobs.update(job.job_id, { completed_at: Date.now() - 8 * 86_400_000 });
    await signed.srv.services.retention.sweep();
    expect((await fetch(job.screenshot_url, { redirect: 'manual' })).status).toBe(404);
  }, 60_000);
});
