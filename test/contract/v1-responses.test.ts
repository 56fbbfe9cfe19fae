import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { batchRoutes } from '../../server/api/batch-routes.js';
import { evidenceRoutes } from '../../server/api/evidence-routes.js';
import { fileRoutes } from '../../server/api/file-routes.js';
import { loginRoutes } from '../../server/api/login-routes.js';
import { mcpRoutes } from '../../server/api/mcp-routes.js';
import { monitorRoutes } from '../../server/api/monitor-routes.js';
import { v1OpenApiRoutes } from '../../server/api/openapi.js';
import { renderRoutes } from '../../server/api/render-routes.js';
import { v1Routes } from '../../server/api/v1-routes.js';
import { MAX_BODY_KB } from '../../server/contract/v1.js';
import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { stillClock } from '../helpers/still-clock.js';
import { startTestServer, type TestServer,waitForJob } from '../helpers/test-server.js';
import { S3RVER_CREDENTIALS, startUploadBucketServer } from '../helpers/upload-bucket.js';
import { ContractChecker, observe, type Observed } from './openapi-checker.js';

let server: TestServer;
const time = stillClock();
let fixtures: FixtureServer;
let checker: ContractChecker;
let key: string;
let keyId: string;
const webhooks: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
let hookServer: http.Server;
let hookUrl: string;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  // Polling several jobs at once passes 10 requests a second; the burst below still passes 40.
  server = await startTestServer({ ratePerSecond: 40 }, { clock: time.clock });
  ({ key, keyId } = await server.account());
  hookServer = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      webhooks.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => hookServer.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`;
  const doc = await (await fetch(`${server.url}/v1/openapi.json`)).json();
  checker = new ContractChecker(doc, '/v1');
});

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
  hookServer?.closeAllConnections();
  await new Promise((resolve) => hookServer?.close(resolve));
});

/** Calls the v1 API and returns the answer after checking it against the served document. */
async function call(method: string, path: string, options: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...(options.key ? { 'x-api-key': options.key } : {}), ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const answer = await observe(server.url, method, `/v1${path}`, { headers, body });
  expect(checker.check(answer)).toEqual([]);
  return answer;
}

const small = () => `${fixtures.url}/small.html`;

async function until(check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the served v1 document', () => {
  it('is served without a key and names this server as its base', async () => {
    const answer = await call('GET', '/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.json.openapi).toBe('3.1.0');
    expect(answer.json.servers).toEqual([{ url: `${server.url}/v1` }]);
  });

  it('describes every route the v1 routers register, and nothing they do not', () => {
    const deps = { ...server.srv.services, trustProxy: [] };
    const registered = [fileRoutes(deps), v1OpenApiRoutes(deps), v1Routes(deps), batchRoutes(deps), evidenceRoutes(deps), monitorRoutes(deps), loginRoutes(deps), renderRoutes(deps), mcpRoutes(deps)]
      .flatMap((router) => router.stack.filter((layer) => layer.methods.length > 0))
      .flatMap((layer) =>
        layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path).replace(/^\/v1/, '').replace(/:(\w+)/g, '{$1}')}`),
      );
    expect(registered.sort()).toEqual(checker.operations().sort());
  });
});

describe('v1 answers match the OpenAPI document', () => {
  it('for a created job through pending, completed with and without its source, and its image', async () => {
    await server.admin('POST', '/queue/pause');
    let created: Observed & { json: any };
    try {
      created = await call('POST', '/screenshot', { key, body: { url: small(), callback_url: hookUrl } });
      expect(created.status).toBe(201);
      const pending = await call('GET', `/screenshot/${created.json.job_id}`, { key });
      expect(pending.json.status).toBe('pending');
    } finally {
      await server.admin('POST', '/queue/resume');
    }
    await waitForJob(server, key, created.json.job_id);
    const done = await call('GET', `/screenshot/${created.json.job_id}`, { key });
    expect(done.json.status).toBe('completed');
    const withSource = await call('GET', `/screenshot/${created.json.job_id}?include_source=1`, { key });
    expect(withSource.json.page_source).toContain('Hello from the fixture');

    const imagePath = new URL(done.json.screenshot_url).pathname.replace(/^\/v1/, '');
    const image = await call('GET', imagePath);
    expect(image.status).toBe(200);
    const cached = await call('GET', imagePath, { headers: { 'if-none-match': image.headers.get('etag')! } });
    expect(cached.status).toBe(304);
    const thumbnail = await call('GET', `${imagePath}/thumbnail`);
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers.get('content-type')).toBe('image/webp');
  });

  it('for saved logins: create, list, read, change, delete, and their refusals', async () => {
    const created = await call('POST', '/logins', { key, body: { name: 'wiki', type: 'basic', site: 'http://127.0.0.1:9', username: 'u', password: 'p' } });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect((await call('POST', '/logins', { key, body: { name: 'wiki', type: 'basic' } })).status).toBe(400);
    expect((await call('GET', '/logins', { key })).status).toBe(200);
    expect((await call('GET', `/logins/${id}`, { key })).status).toBe(200);
    expect((await call('GET', '/logins/login_000000000000000000000000', { key })).status).toBe(404);
    expect((await call('PATCH', `/logins/${id}`, { key, body: { name: 'renamed' } })).status).toBe(200);
    expect((await call('PATCH', `/logins/${id}`, { key, body: { login_url: 'http://127.0.0.1:9/' } })).status).toBe(400);
    expect((await call('DELETE', `/logins/${id}`, { key })).status).toBe(204);
    expect((await call('DELETE', `/logins/${id}`, { key })).status).toBe(404);
  });

  it('for batches: create, a retry, read, a page, the archive, cancel, and their refusals', async () => {
    const body = { items: [{ url: small() }, { url: small(), format: 'jpeg' }], width: 320, height: 240 };
    const created = await call('POST', '/batches', { key, body, headers: { 'idempotency-key': 'contract-batch' } });
    expect(created.status).toBe(201);
    expect((await call('POST', '/batches', { key, body, headers: { 'idempotency-key': 'contract-batch' } })).json).toEqual(created.json);
    const id = created.json.batch_id;
    await until(async () => (await call('GET', `/batches/${id}`, { key })).json.status === 'completed');
    expect((await call('GET', `/batches/${id}?per_page=1`, { key })).json.next_page).toBeDefined();
    expect((await call('GET', `/batches/${id}?per_page=0`, { key })).status).toBe(400);
    expect((await call('GET', `/batches/${id}/archive`, { key })).status).toBe(200);
    expect((await call('DELETE', `/batches/${id}`, { key })).json.status).toBe('completed');
    expect((await call('POST', '/batches', { key, body: { items: [{ url: 'ftp://example.test/' }] } })).status).toBe(400);
    expect((await call('GET', '/batches/batch_000000000000000000000000', { key })).status).toBe(404);
    expect((await call('DELETE', '/batches/batch_000000000000000000000000', { key })).status).toBe(404);
    expect((await call('GET', '/batches/batch_000000000000000000000000/archive', { key })).status).toBe(404);
  });

  it('for monitors: create, list, read, change, run, checks, pin, the diff, delete, and their refusals', async () => {
    const box = (colour: string) => `<div style="width:300px;height:200px;background:${colour}"></div>`;
    const created = await call('POST', '/monitors', { key, body: { html: box('#2060c0'), schedule: { every_minutes: 60 }, name: 'doc', propose_masks: false } });
    expect(created.status).toBe(201);
    const id = created.json.id;
    expect((await call('POST', '/monitors', { key, body: { html: box('red'), schedule: { every_minutes: 0 } } })).status).toBe(400);
    expect((await call('GET', '/monitors', { key })).json.monitors.map((m: { id: string }) => m.id)).toContain(id);
    expect((await call('GET', `/monitors/${id}`, { key })).status).toBe(200);
    expect((await call('GET', '/monitors/mon_000000000000000000000000', { key })).status).toBe(404);
    const settled = async (jobId: string) => {
      await waitForJob(server, key, jobId);
      let found: any;
      await until(async () => {
        const page = await call('GET', `/monitors/${id}/checks?limit=10`, { key });
        found = page.json.checks.find((c: { job_id: string }) => c.job_id === jobId);
        return found?.status !== 'pending';
      });
      return found;
    };
    const first = await call('POST', `/monitors/${id}/run`, { key });
    expect(first.status).toBe(201);
    await settled(first.json.job_id);
    expect((await call('PATCH', `/monitors/${id}`, { key, body: { html: box('#e0a020'), threshold: 0.01 } })).status).toBe(200);
    expect((await call('PATCH', `/monitors/${id}`, { key, body: { threshold: 5 } })).status).toBe(400);
    const second = await call('POST', `/monitors/${id}/run`, { key });
    const check = await settled(second.json.job_id);
    expect(check.changed).toBe(true);
    expect((await call('GET', `/monitors/${id}/checks?limit=0`, { key })).status).toBe(400);
    const diff = await call('GET', new URL(check.diff_url).pathname.replace(/^\/v1/, ''));
    expect(diff.status).toBe(200);
    expect((await call('GET', '/files/AAAAAAAAAAAAAAAAAAAAAAAA.png/diff')).status).toBe(404);
    const pinned = await call('POST', `/monitors/${id}/checks/${first.json.job_id}/pin`, { key });
    expect(pinned.json).toMatchObject({ baseline: 'pinned', pinned_job_id: first.json.job_id });
    // Nothing proposed (the monitor did not ask for proposals): both answer the monitor as it is.
    expect((await call('POST', `/monitors/${id}/proposed-masks/accept`, { key })).status).toBe(200);
    expect((await call('POST', `/monitors/${id}/proposed-masks/reject`, { key })).status).toBe(200);
    expect((await call('DELETE', `/monitors/${id}`, { key })).status).toBe(204);
    expect((await call('POST', `/monitors/${id}/run`, { key })).status).toBe(404);
    expect((await call('POST', `/monitors/${id}/proposed-masks/accept`, { key })).status).toBe(404);
  });

  it('for several devices and another format', async () => {
    const created = await call('POST', '/screenshot', { key, body: { url: small(), devices: ['all'], format: 'jpeg', quality: 60 } });
    expect(created.status).toBe(201);
    expect(created.json.jobs).toHaveLength(3);
    for (const job of created.json.jobs) await waitForJob(server, key, job.job_id);
    const image = await call('GET', new URL((await call('GET', `/screenshot/${created.json.jobs[1].job_id}`, { key })).json.screenshot_url).pathname.replace(/^\/v1/, ''));
    expect(image.headers.get('content-type')).toBe('image/jpeg');
  });

  it('for a job seen while processing, when the capture is slow enough to be seen', async () => {
    const created = await call('POST', '/screenshot', { key, body: { url: `${fixtures.url}/tall.html?h=12000`, full_page: true } });
    let sawProcessing = false;
    await until(async () => {
      const answer = await call('GET', `/screenshot/${created.json.job_id}`, { key });
      sawProcessing ||= answer.json.status === 'processing';
      return answer.json.status === 'completed' || answer.json.status === 'failed';
    }, 60_000);
    expect(sawProcessing).toBe(true);
  });

  it("for a job uploaded to the account's storage destination, and the 400 of an account without one", async () => {
    const { key: other } = await server.account();
    expect((await call('POST', '/screenshot', { key: other, body: { url: small(), upload: true } })).status).toBe(400);
    const s3 = await startUploadBucketServer();
    try {
      await s3.createBucket('contract-shots');
      const { key: uploader, accountId } = await server.account();
      await server.admin('PUT', `/accounts/${accountId}/storage`, { endpoint: s3.endpoint, bucket: 'contract-shots', path_style: true, ...S3RVER_CREDENTIALS });
      const created = await call('POST', '/screenshot', { key: uploader, body: { url: small(), upload: true } });
      await waitForJob(server, uploader, created.json.job_id);
      const done = await call('GET', `/screenshot/${created.json.job_id}`, { key: uploader });
      expect(done.json.uploaded_to).toEqual({ bucket: 'contract-shots', key: `${created.json.job_id}-desktop.png` });
    } finally {
      await s3.close();
    }
  });

  it('for a failed job', async () => {
    const created = await call('POST', '/screenshot', { key, body: { url: 'http://127.0.0.1:1/refused' } });
    const ended = await waitForJob(server, key, created.json.job_id);
    expect(ended.status).toBe('failed');
    const failed = await call('GET', `/screenshot/${created.json.job_id}`, { key });
    expect(failed.json.error).toEqual(expect.any(String));
  });

  it('for a render link: the picture, a 304, a 202, a failure, and its refusals', async () => {
    const link = async (options: Record<string, unknown>) => {
      const made = new URL((await server.admin('POST', `/keys/${keyId}/render-link`, options)).body.render_url);
      return made.pathname.replace(/^\/v1/, '') + made.search;
    };
    const picture = await call('GET', await link({ url: small(), cache_ttl: 600 }));
    expect(picture.status).toBe(200);
    expect(picture.headers.get('x-cache')).toBe('miss');
    const again = await call('GET', await link({ url: small(), cache_ttl: 600 }), { headers: { 'if-none-match': picture.headers.get('etag')! } });
    expect(again.status).toBe(304);
    const tampered = await call('GET', `${await link({ url: small(), cache_ttl: 600 })}&full_page=true`);
    expect(tampered.status).toBe(403);
    const waiting = await call('GET', await link({ url: small(), delay: 3000, cache_ttl: 0, render_timeout: 1 }));
    expect(waiting.status).toBe(202);
    await waitForJob(server, key, waiting.json.job_id);
    const failed = await call('GET', await link({ url: 'http://127.0.0.1:1/refused' }));
    expect(failed.status).toBe(502);
    expect((await call('GET', await link({ url: small(), devices: ['all'] }))).status).toBe(400);
    expect((await call('GET', '/render?url=x&key_id=nope&signature=00')).status).toBe(401);
  });

  it('for the usage record', async () => {
    const usage = await call('GET', '/usage', { key });
    expect(usage.status).toBe(200);
  });

  it('for every error of the create endpoint', async () => {
    const statuses: number[] = [];
    const record = async (...args: Parameters<typeof call>) => statuses.push((await call(...args)).status);
    await record('POST', '/screenshot', { key, body: { url: 'example.com' } });
    await record('POST', '/screenshot', { key, body: { url: small(), fullpage: true } });
    await record('POST', '/screenshot', { key, body: '{"url": ' });
    await record('POST', '/screenshot', { key, body: 'url=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    await record('POST', '/screenshot', { key, body: { url: small(), pad: 'x'.repeat(MAX_BODY_KB * 1024 + 1) } });
    await record('POST', '/screenshot', { body: { url: small() } });
    await record('POST', '/screenshot', { key: 'sa_not-a-key', body: { url: small() } });
    expect(statuses).toEqual([400, 400, 400, 400, 413, 401, 401]);
  });

  it('for each 403: IP not allowed, e-mail not verified and access denied', async () => {
    const outside = await server.account({}, { ip_whitelist: ['10.0.0.0/8'] });
    const unverified = await server.account({ email_verified: false });
    const basic = await server.account({ plan: 'basic' });
    const titles: string[] = [];
    for (const k of [outside.key, unverified.key, basic.key]) {
      titles.push((await call('POST', '/screenshot', { key: k, body: { url: small() } })).json.error);
      titles.push((await call('GET', '/usage', { key: k })).json.error);
    }
    expect(titles).toEqual(['IP not allowed', 'IP not allowed', 'Email not verified', 'Email not verified', 'Access denied', 'Access denied']);
  });

  it('for a 404 of an unknown job', async () => {
    const missing = await call('GET', '/screenshot/job_000000000000000000000000', { key });
    expect(missing.status).toBe(404);
    const file = await call('GET', '/files/AAAAAAAAAAAAAAAAAAAAAAAA.png');
    expect(file.status).toBe(404);
    expect((await call('GET', '/files/AAAAAAAAAAAAAAAAAAAAAAAA.png/thumbnail')).status).toBe(404);
  });

  it('for the daily limit and the per-second limit', async () => {
    const limited = await server.account({ daily_limit: 1 });
    expect((await call('POST', '/screenshot', { key: limited.key, body: { url: small() } })).status).toBe(201);
    const daily = await call('POST', '/screenshot', { key: limited.key, body: { url: small() } });
    expect(daily.status).toBe(429);
    expect(daily.headers.get('x-ratelimit-remaining')).toBe('0');

    const burst = await server.account();
    const answers = await time.still(() => Promise.all(Array.from({ length: 60 }, () => call('GET', '/usage', { key: burst.key }))));
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0].headers.get('retry-after')).toBe(String(refused[0].json.retry_after));
  });

  it('for a full queue', async () => {
    const { body: before } = await server.admin('GET', '/settings');
    await server.admin('POST', '/queue/pause');
    await server.admin('PUT', '/settings', { queue_limit: 1 });
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await call('POST', '/screenshot', { key, body: { url: small() } }));
      expect(answers.map((a) => a.status)).toContain(503);
    } finally {
      await server.admin('PUT', '/settings', { queue_limit: before.queue_limit });
      await server.admin('POST', '/queue/resume');
    }
  });

  it('for the MCP endpoint: initialize, without a key, and without the event-stream Accept', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'contract', version: '1' } },
    });
    const accept = 'application/json, text/event-stream';
    expect((await call('POST', '/mcp', { key, body: initialize, headers: { accept } })).status).toBe(200);
    expect((await call('POST', '/mcp', { body: initialize, headers: { accept } })).status).toBe(401);
    expect((await call('POST', '/mcp', { key, body: initialize, headers: { accept: 'application/json' } })).status).toBe(406);
  });

  it('for evidence: the bundle, the public key and the check of the bundle', async () => {
    const created = await call('POST', '/screenshot', { key, body: { url: small(), evidence: true } });
    const done = await waitForJob(server, key, created.json.job_id);
    const bundle = await call('GET', new URL(done.evidence_url).pathname.replace(/^\/v1/, ''));
    expect(bundle.status).toBe(200);
    expect((await call('GET', '/evidence/public-key')).status).toBe(200);
    const checked = await observe(server.url, 'POST', '/v1/evidence/verify', { headers: { 'x-api-key': key, 'content-type': 'application/wacz' }, body: new Uint8Array(bundle.body) });
    expect(checker.check(checked)).toEqual([]);
    expect(checked.json).toMatchObject({ valid: true, signed_by_this_appliance: true });
  });

  it('renders 405 and unknown routes in the documented error shape', async () => {
    const wrongMethod = await observe(server.url, 'DELETE', '/v1/usage', { headers: { 'x-api-key': key } });
    expect(wrongMethod.status).toBe(405);
    expect(checker.checkSchema('Error', wrongMethod.json)).toEqual([]);
    const unknown = await observe(server.url, 'GET', '/v1/nothing-here');
    expect(unknown.status).toBe(404);
    expect(checker.checkSchema('Error', unknown.json)).toEqual([]);
  });

  it('sends webhooks whose body matches the documented event', async () => {
    await until(async () => webhooks.length > 0, 30_000);
    const [hook] = webhooks;
    expect(checker.checkSchema('WebhookEvent', JSON.parse(hook.body))).toEqual([]);
    expect(hook.headers['webhook-signature']).toMatch(/^v1,/);
    expect(hook.headers['webhook-id']).toBeTruthy();
    expect(hook.headers['webhook-timestamp']).toMatch(/^\d+$/);
  });

  it('has exercised every documented operation and the main error statuses', () => {
    expect(checker.unexercised()).toEqual([]);
    const statuses = new Set([...checker.seen].map((s) => s.split(' ')[2]));
    for (const status of ['200', '201', '304', '400', '401', '403', '404', '413', '429', '503']) expect(statuses).toContain(status);
  });
});
