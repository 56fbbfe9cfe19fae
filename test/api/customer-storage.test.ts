// The customer's own bucket through the service: the admin sets an account's storage
// destination (its secret never answered, never logged, sealed at rest), a v1 request asks for
// an upload, and the completed job and its webhook say where the image went. A destination the
// guard denies, or one that is down, is a warning on a completed job whose picture is served.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { filesHolding } from '../helpers/files-under.js';
import { closedPort } from '../helpers/ports.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';
import { startUploadBucketServer, type UploadBucketServer } from '../helpers/upload-bucket.js';

const BUCKET = 'customer-shots';
const SECRET = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY-3f9a';
const KEY_ID = 'AKIAEXAMPLEKEYID0042';

let fixtures: FixtureServer;
let s3: UploadBucketServer;
let server: TestServer;
let receiver: http.Server;
let receiverUrl: string;
const hooks: string[] = [];
const logLines: string[] = [];

beforeAll(async () => {
  fixtures = await startFixtureServer();
  s3 = await startUploadBucketServer();
  await s3.createBucket(BUCKET);
  // The destinations' own credentials: s3rver checks each upload's signature with this secret.
  s3.addKeyPair(KEY_ID, SECRET);
  server = await startTestServer({ ratePerSecond: 1000 }, { log: (line) => logLines.push(line) });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      hooks.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
}, 120_000);
afterAll(async () => {
  await server?.close();
  await s3?.close();
  await fixtures?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

const destination = (fields: Record<string, unknown> = {}) => ({
  endpoint: s3.endpoint,
  bucket: BUCKET,
  prefix: 'shots',
  access_key_id: KEY_ID,
  secret_access_key: SECRET,
  path_style: true,
  ...fields,
});

async function webhookOf(jobId: string): Promise<{ type: string; data: Record<string, unknown> }> {
  await expect.poll(() => hooks.some((h) => h.includes(jobId)), { timeout: 30_000 }).toBe(true);
  return JSON.parse(hooks.find((h) => h.includes(jobId)) as string);
}

describe('the storage destination in the admin API', () => {
  it('sets, shows and removes it; the secret is never answered, logged or kept in clear', async () => {
    const { accountId } = await server.account();
    const put = await server.admin('PUT', `/accounts/${accountId}/storage`, destination());
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      account_id: accountId,
      endpoint: s3.endpoint,
      bucket: BUCKET,
      prefix: 'shots',
      region: 'us-east-1',
      path_style: true,
      access_key_id: 'AKIA…0042',
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    const got = await server.admin('GET', `/accounts/${accountId}/storage`);
    expect(got).toEqual({ status: 200, body: put.body });
    for (const answer of [put, got]) {
      expect(JSON.stringify(answer.body)).not.toContain(SECRET);
      expect(JSON.stringify(answer.body)).not.toContain(KEY_ID);
    }
    expect(await filesHolding(server.dataDir, BUCKET), 'the destination is kept').not.toEqual([]);
    expect(await filesHolding(server.dataDir, SECRET)).toEqual([]);
    expect(await filesHolding(server.dataDir, KEY_ID)).toEqual([]);
    expect(logLines.filter((line) => line.includes(SECRET) || line.includes(KEY_ID))).toEqual([]);

    expect((await server.admin('DELETE', `/accounts/${accountId}/storage`)).status).toBe(204);
    expect((await server.admin('GET', `/accounts/${accountId}/storage`)).status).toBe(404);
    expect((await server.admin('DELETE', `/accounts/${accountId}/storage`)).status).toBe(404);
  });

  it.each([
    ['endpoint', { endpoint: 'ftp://s3.example.test' }],
    ['endpoint', { endpoint: 'not a url' }],
    ['endpoint', { endpoint: 'https://user:pw@s3.example.test' }],
    ['bucket', { bucket: 'Upper-Case' }],
    ['bucket', { bucket: 'ab' }],
    ['bucket', { bucket: '192.168.1.10' }],
    ['bucket', { bucket: 'two..dots' }],
    ['prefix', { prefix: '/rooted' }],
    ['prefix', { prefix: 'a/../b' }],
    ['region', { region: 'EU West' }],
    ['path_style', { path_style: 'yes' }],
    ['secret_access_key', { secret_access_key: undefined }],
    ['access_key_id', { access_key_id: '' }],
    ['secret', { secret: 'typo' }],
  ])('refuses a bad %s with 400 naming it', async (field, fields) => {
    const { accountId } = await server.account();
    const answer = await server.admin('PUT', `/accounts/${accountId}/storage`, destination(fields));
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain(field);
    expect(answer.body.message).not.toContain(SECRET);
    expect((await server.admin('GET', `/accounts/${accountId}/storage`)).status).toBe(404);
  });

  it('answers 404 for an account that does not exist, and forgets the destination of a deleted account', async () => {
    expect((await server.admin('PUT', '/accounts/nosuchaccount0000/storage', destination())).status).toBe(404);
    expect((await server.admin('GET', '/accounts/nosuchaccount0000/storage')).status).toBe(404);
    const { accountId } = await server.account();
    await server.admin('PUT', `/accounts/${accountId}/storage`, destination());
    expect((await server.admin('DELETE', `/accounts/${accountId}`)).status).toBe(204);
    expect(await server.srv.services.stores.destinations.get(accountId)).toBeNull();
  });
});

describe('upload and storage_path in POST /v1/screenshot', () => {
  it('refuses an upload for an account without a destination, naming upload', async () => {
    const { key } = await server.account();
    const answer = await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, upload: true });
    expect(answer.status).toBe(400);
    expect((await answer.json()).message).toMatch(/^upload .*storage destination/);
  });

  it.each([
    [{ upload: 'yes' }, 'upload'],
    [{ storage_path: 'shots/{jobid}.{ext}' }, 'storage_path'],
    [{ storage_path: '/rooted/{job_id}.{ext}' }, 'storage_path'],
    [{ storage_path: 'a/../{job_id}.{ext}' }, 'storage_path'],
    [{ storage_path: '{job_id.{ext}' }, 'storage_path'],
    [{ storage_path: 'same-key.png', devices: ['desktop', 'mobile'] }, 'storage_path'],
  ])('refuses %j with 400 naming %s', async (fields, field) => {
    const { key, accountId } = await server.account();
    await server.admin('PUT', `/accounts/${accountId}/storage`, destination());
    const answer = await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, ...fields });
    expect(answer.status).toBe(400);
    expect((await answer.json()).message).toMatch(new RegExp(`^${field}\\b`));
  });

  it('uploads the image to <prefix>/<job_id>-<device>.<ext> as image/png; the job and its webhook say where', async () => {
    const { key, accountId } = await server.account();
    await server.admin('PUT', `/accounts/${accountId}/storage`, destination());
    const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, upload: true, callback_url: receiverUrl })).json();
    const job = await waitForJob(server, key, created.job_id);
    expect(job.status).toBe('completed');
    const where = { bucket: BUCKET, key: `shots/${created.job_id}-desktop.png` };
    expect(job.uploaded_to).toEqual(where);
    const stored = await s3.read(BUCKET, where.key);
    expect(stored?.contentType).toBe('image/png');
    const served = Buffer.from(await (await fetch(job.screenshot_url)).arrayBuffer());
    expect(stored?.body.equals(served)).toBe(true);
    const hook = await webhookOf(created.job_id);
    expect(hook.type).toBe('screenshot.completed');
    expect(hook.data.uploaded_to).toEqual(where);
    const adminJob = await server.admin('GET', `/jobs/${created.job_id}`);
    expect(adminJob.body.options).toMatchObject({ upload: true });
    expect(adminJob.body.uploaded_to).toEqual(where);
    expect(logLines.filter((line) => line.includes(SECRET) || line.includes(KEY_ID))).toEqual([]);
  });

  it('puts each device at its storage_path', async () => {
    const { key, accountId } = await server.account();
    await server.admin('PUT', `/accounts/${accountId}/storage`, destination({ prefix: '' }));
    const created = await (
      await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, devices: ['desktop', 'mobile'], format: 'jpeg', storage_path: 'runs/{date}/{device}-{job_id}.{ext}' })
    ).json();
    const day = new Date().toISOString().slice(0, 10);
    for (const { job_id: id, device } of created.jobs as Array<{ job_id: string; device: string }>) {
      const job = await waitForJob(server, key, id);
      expect(job.uploaded_to).toEqual({ bucket: BUCKET, key: `runs/${day}/${device}-${id}.jpg` });
      expect((await s3.read(BUCKET, job.uploaded_to.key))?.contentType).toBe('image/jpeg');
    }
  });

  it("keeps the picture of a job whose destination the egress guard denies, with a warning saying so", async () => {
    const { key, accountId } = await server.account();
    await server.admin('PUT', `/accounts/${accountId}/storage`, destination({ endpoint: `http://127.0.0.2:${s3.port}` }));
    const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, upload: true, callback_url: receiverUrl })).json();
    const job = await waitForJob(server, key, created.job_id);
    expect(job.status).toBe('completed');
    expect(job.uploaded_to).toBeUndefined();
    expect(job.warnings).toContainEqual({ code: 'upload_failed', message: expect.stringMatching(/blocked by egress policy: 127\.0\.0\.2 is a loopback address/) });
    expect((await fetch(job.screenshot_url)).status).toBe(200);
    expect((await webhookOf(created.job_id)).data.warnings).toEqual(job.warnings);
    expect((await s3.keys(BUCKET)).filter((k) => k.includes(created.job_id))).toEqual([]);
  });

  it("refuses a destination pointing at the service itself", async () => {
    const { key, accountId } = await server.account();
    await server.admin('PUT', `/accounts/${accountId}/storage`, destination({ endpoint: server.url }));
    const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, upload: true })).json();
    const job = await waitForJob(server, key, created.job_id);
    expect(job.status).toBe('completed');
    expect(job.warnings.at(-1)).toEqual({ code: 'upload_failed', message: expect.stringMatching(/blocked by egress policy: .*belongs to this service/) });
  });

  it('completes the job with a warning when the destination is down', async () => {
    const port = await closedPort();
    const { key, accountId } = await server.account();
    await server.admin('PUT', `/accounts/${accountId}/storage`, destination({ endpoint: `http://127.0.0.1:${port}` }));
    const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, storage_path: '{job_id}.{ext}' })).json();
    const job = await waitForJob(server, key, created.job_id);
    expect(job.status).toBe('completed');
    expect(job.warnings.at(-1)).toEqual({ code: 'upload_failed', message: expect.stringContaining('ECONNREFUSED') });
    expect((await fetch(job.screenshot_url)).status).toBe(200);
  });
});
