// A capture's warnings through the real API: the job resource, the webhook, the admin job view,
// the result cache and the metric by code, each answer checked against the served OpenAPI
// documents. Real server, real Chromium, fixture pages on loopback.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { JobRecord } from '../../server/store/records/job-record.js';
import { ContractChecker, observe } from '../contract/openapi-checker.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';
import { parsePrometheusText, valueOf } from '../ops/prom-text.js';

let fixtures: FixtureServer;
let server: TestServer;
let key: string;
let v1: ContractChecker;
let admin: ContractChecker;
let receiver: http.Server;
let receiverUrl: string;
const received: string[] = [];

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({ ratePerSecond: 1000 });
  ({ key } = await server.account());
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  v1 = new ContractChecker(await (await fetch(`${server.url}/v1/openapi.json`)).json(), '/v1');
  const adminDoc = await fetch(`${server.url}/admin/api/openapi.json`, { headers: { authorization: `Bearer ${server.srv.adminToken}` } });
  admin = new ContractChecker(await adminDoc.json(), '/admin/api');
});

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** GET of the v1 API, checked against the served document. */
async function getV1(path: string): Promise<any> {
  const answer = await observe(server.url, 'GET', `/v1${path}`, { headers: { 'x-api-key': key } });
  expect(v1.check(answer)).toEqual([]);
  return answer.json;
}

/** GET of the admin API, checked against the served document. */
async function getAdmin(path: string): Promise<any> {
  const answer = await observe(server.url, 'GET', `/admin/api${path}`, { headers: { authorization: `Bearer ${server.srv.adminToken}` } });
  expect(admin.check(answer)).toEqual([]);
  return answer.json;
}

async function warningsCounted(code: string): Promise<number> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.srv.adminToken}` } });
  return valueOf(parsePrometheusText(await res.text()), 'screenshot_capture_warnings_total', { code }) ?? 0;
}

async function until<T>(get: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function screenshot(body: Record<string, unknown>): Promise<any> {
  const res = await server.v1('POST', '/screenshot', key, body);
  expect(res.status).toBe(201);
  return res.json();
}

describe('capture warnings through the API', () => {
  it('gives a completed job of a clean page warnings: [] in its resource and the admin view', async () => {
    const created = await screenshot({ url: `${fixtures.url}/warn/clean.html` });
    await waitForJob(server, key, created.job_id);
    expect((await getV1(`/screenshot/${created.job_id}`)).warnings).toEqual([]);
    expect((await getAdmin(`/jobs/${created.job_id}`)).warnings).toEqual([]);
  });

  it('carries the warnings in the job resource, the webhook, the admin view, and counts them by code', async () => {
    const before = { console: await warningsCounted('console_errors'), http: await warningsCounted('http_error'), blank: await warningsCounted('blank') };
    const created = await screenshot({ url: `${fixtures.url}/warn/console-errors.html`, callback_url: receiverUrl });
    await waitForJob(server, key, created.job_id);
    const job = await getV1(`/screenshot/${created.job_id}`);
    expect(job.warnings).toEqual([{ code: 'console_errors', message: 'The page reported 3 errors to its console (first: first error 42).' }]);

    const hook = JSON.parse(await until(() => received.find((body) => body.includes(created.job_id))));
    expect(hook.type).toBe('screenshot.completed');
    expect(hook.data.warnings).toEqual(job.warnings);

    expect((await getAdmin(`/jobs/${created.job_id}`)).warnings).toEqual(job.warnings);
    const list = await getAdmin('/jobs?limit=5');
    expect(list.jobs.find((j: any) => j.job_id === created.job_id).warnings).toEqual(job.warnings);

    expect(await warningsCounted('console_errors')).toBe(before.console + 1);
    expect(await warningsCounted('http_error')).toBe(before.http);
    expect(await warningsCounted('blank')).toBe(before.blank);
  });

  it('serves the same warnings with a cached result, without counting them again', async () => {
    const body = { url: `${fixtures.url}/warn/not-found.html`, cache_ttl: 3600 };
    const first = await screenshot(body);
    await waitForJob(server, key, first.job_id);
    const counted = await warningsCounted('http_error');
    const again = await screenshot(body);
    expect(again.cached).toBe(true);
    const [a, b] = [await getV1(`/screenshot/${first.job_id}`), await getV1(`/screenshot/${again.job_id}`)];
    expect(a.warnings).toEqual([{ code: 'http_error', message: expect.stringContaining('HTTP 404') }]);
    expect(b.warnings).toEqual(a.warnings);
    expect(await warningsCounted('http_error')).toBe(counted);
  });

  it('reads a completed job stored before warnings existed as warnings: []', async () => {
    const created = await screenshot({ url: `${fixtures.url}/small.html` });
    await waitForJob(server, key, created.job_id);
    const stored = (await server.srv.services.stores.jobs.get(created.job_id)) as JobRecord;
    const { warnings: _warnings, ...older } = stored;
    await server.srv.services.stores.jobs.remove([created.job_id]);
    await server.srv.services.stores.jobs.insert([older]);
    expect(await server.srv.services.stores.jobs.get(created.job_id)).not.toHaveProperty('warnings');
    expect((await getV1(`/screenshot/${created.job_id}`)).warnings).toEqual([]);
    expect((await getAdmin(`/jobs/${created.job_id}`)).warnings).toEqual([]);
  });

  it('gives pending and failed jobs no warnings field', async () => {
    const created = await screenshot({ url: 'http://127.0.0.1:9/gone' });
    const failed = await waitForJob(server, key, created.job_id);
    expect(failed.status).toBe('failed');
    expect(await getV1(`/screenshot/${created.job_id}`)).not.toHaveProperty('warnings');
  });
});
