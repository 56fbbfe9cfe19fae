import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { stillClock } from '../helpers/still-clock.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';
import { type Family, parsePrometheusText, sumOf, valueOf } from './prom-text.js';

let server: TestServer;
const time = stillClock();
let fixtures: FixtureServer;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  // One browser, recycled after every capture, so a restart is counted too.
  server = await startTestServer({ browsers: 1, recycleAfter: 1 }, { clock: time.clock });
});

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

async function scrape(target: TestServer = server, token = target.srv.adminToken): Promise<Map<string, Family>> {
  const res = await fetch(`${target.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.text());
}

describe('GET /metrics', () => {
  it('answers 401 without the token and with a wrong one', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'Unauthorized' });
  });

  it('answers 405 to a POST and 404 to another spelling', async () => {
    const post = await fetch(`${server.url}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${server.srv.adminToken}` } });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((await fetch(`${server.url}/Metrics`, { headers: { authorization: `Bearer ${server.srv.adminToken}` } })).status).toBe(404);
  });

  it('is a valid exposition with every metric of the service', async () => {
    const families = await scrape();
    for (const name of [
      'screenshot_queue_depth',
      'screenshot_jobs_running',
      'screenshot_jobs_ended_total',
      'screenshot_jobs_failed_total',
      'screenshot_capture_duration_seconds',
      'screenshot_browsers',
      'screenshot_browsers_up',
      'screenshot_browser_restarts_total',
      'screenshot_browser_hung_kills_total',
      'screenshot_capture_crashes_total',
      'screenshot_page_memory_kills_total',
      'screenshot_egress_denials_total',
      'screenshot_webhook_deliveries',
      'screenshot_webhook_attempts_total',
      'screenshot_http_requests_total',
      'screenshot_http_request_duration_seconds',
      'screenshot_rate_limit_refusals_total',
      'screenshot_result_cache_total',
      'screenshot_capture_warnings_total',
      'process_resident_memory_bytes',
    ]) {
      expect(families.has(name), name).toBe(true);
    }
    expect(families.get('screenshot_capture_duration_seconds')!.type).toBe('histogram');
    expect(valueOf(families, 'screenshot_browsers')).toBe(1);
    expect(valueOf(families, 'screenshot_browsers_up')).toBe(1);
    expect(valueOf(families, 'screenshot_jobs_failed_total', { failure_class: 'egress_denied' })).toBe(0);
  });

  it('counts a real capture, a denied page, a denied sub-request, the requests and a recycled browser', async () => {
    const before = await scrape();
    const { key } = await server.account();
    const created = await (
      await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, devices: ['desktop', 'mobile'], full_page: true })
    ).json();
    // 127.0.0.2 is loopback and only 127.0.0.1/32 is allowed: the job fails, and an image of
    // the page below is refused at the proxy.
    const denied = await (await server.v1('POST', '/screenshot', key, { url: 'http://127.0.0.2:9/' })).json();
    const port = new URL(fixtures.url).port;
    const embed = await (
      await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/embed-image.html?src=http://127.0.0.2:${port}/img/0.png` })
    ).json();
    const jobs = await Promise.all(
      [...created.jobs.map((j: { job_id: string }) => j.job_id), denied.job_id, embed.job_id].map((id: string) => waitForJob(server, key, id)),
    );
    expect(jobs.map((j) => j.status)).toEqual(['completed', 'completed', 'failed', 'completed']);
    const after = await scrape();

    const delta = (name: string, labels: Record<string, string> = {}) => sumOf(after, name, labels) - sumOf(before, name, labels);
    expect(delta('screenshot_jobs_ended_total', { status: 'completed' })).toBe(3);
    expect(delta('screenshot_jobs_ended_total', { status: 'failed' })).toBe(1);
    expect(delta('screenshot_jobs_failed_total', { failure_class: 'egress_denied' })).toBe(1);
    expect(delta('screenshot_capture_duration_seconds_count', { preset: 'desktop', full_page: 'true' })).toBe(1);
    expect(delta('screenshot_capture_duration_seconds_count', { preset: 'mobile', full_page: 'true' })).toBe(1);
    expect(delta('screenshot_capture_duration_seconds_count', { preset: 'desktop', full_page: 'false' })).toBe(1);
    expect(delta('screenshot_capture_duration_seconds_sum')).toBeGreaterThan(0);
    expect(delta('screenshot_egress_denials_total', { reason: 'loopback' })).toBeGreaterThanOrEqual(2);
    expect(delta('screenshot_http_requests_total', { method: 'POST', route: '/v1/screenshot', status: '201' })).toBe(3);
    expect(delta('screenshot_http_requests_total', { method: 'GET', route: '/v1/screenshot/:job_id' })).toBeGreaterThanOrEqual(4);
    expect(delta('screenshot_http_requests_total', { route: '/metrics', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(delta('screenshot_browser_restarts_total', { reason: 'recycled' })).toBeGreaterThanOrEqual(2);
    expect(valueOf(after, 'screenshot_queue_depth')).toBe(0);
    // No address with an id or an image name is ever a label.
    const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.srv.adminToken}` } })).text();
    expect(text).not.toContain(created.job_id);
    expect(text).not.toContain('/v1/files/');
  });

  it('counts requests refused for the rate limit, by route', async () => {
    const before = await scrape();
    const { key } = await server.account();
    const answers = await time.still(() => Promise.all(Array.from({ length: 25 }, () => server.v1('GET', '/usage', key))));
    const refused = answers.filter((r) => r.status === 429).length;
    expect(refused).toBeGreaterThan(0);
    const after = await scrape();
    expect(sumOf(after, 'screenshot_rate_limit_refusals_total', { route: '/v1/usage' }) - sumOf(before, 'screenshot_rate_limit_refusals_total', { route: '/v1/usage' })).toBe(refused);
    expect(sumOf(after, 'screenshot_http_requests_total', { route: '/v1/usage', status: '429' }) - sumOf(before, 'screenshot_http_requests_total', { route: '/v1/usage', status: '429' })).toBe(refused);
  });

  // The deliveries gauge reads the store; the attempts counter moves once the store's write has
  // returned. A scrape between the two sees one without the other, so both are polled together.
  const webhookCounts = async (state: 'delivered' | 'failed') => {
    const families = await scrape();
    return {
      deliveries: valueOf(families, 'screenshot_webhook_deliveries', { state }) ?? 0,
      attempts: valueOf(families, 'screenshot_webhook_attempts_total', { outcome: state }) ?? 0,
    };
  };

  it('counts the stored webhook deliveries by state', async () => {
    const before = await webhookCounts('failed');
    const { key } = await server.account();
    const job = await (
      await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, callback_url: 'http://127.0.0.2:9/hook' })
    ).json();
    await waitForJob(server, key, job.job_id);
    // Refused by the egress policy: its one attempt fails and leaves nothing to try again.
    await expect.poll(() => webhookCounts('failed')).toEqual({ deliveries: before.deliveries + 1, attempts: before.attempts + 1 });
  });

  it('counts a delivery the receiver took as delivered', async () => {
    const receiver = http.createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const before = await webhookCounts('delivered');
      const { key } = await server.account();
      const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const job = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html`, callback_url: hook })).json();
      await waitForJob(server, key, job.job_id);
      await expect.poll(() => webhookCounts('delivered')).toEqual({ deliveries: before.deliveries + 1, attempts: before.attempts + 1 });
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});

describe('who may scrape', () => {
  it('keeps a registry per server: another server in the process counts only its own', async () => {
    const other = await startTestServer({ browsers: 1 });
    try {
      const families = await scrape(other);
      expect(sumOf(families, 'screenshot_jobs_ended_total')).toBe(0);
      expect(sumOf(families, 'screenshot_http_requests_total', { route: '/v1/screenshot' })).toBe(0);
      expect(sumOf(await scrape(), 'screenshot_jobs_ended_total')).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });

  it('takes only the metrics token when one is set, which opens nothing else', async () => {
    const metricsToken = 'm'.repeat(32);
    const other = await startTestServer({ browsers: 1, metricsToken });
    try {
      await scrape(other, metricsToken);
      expect((await fetch(`${other.url}/metrics`, { headers: { authorization: `Bearer ${other.srv.adminToken}` } })).status).toBe(401);
      expect((await fetch(`${other.url}/admin/api/accounts`, { headers: { authorization: `Bearer ${metricsToken}` } })).status).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('answers 403 to an address outside the metrics ranges, even with the token', async () => {
    const other = await startTestServer({ browsers: 1, metricsAllow: ['192.0.2.0/24'] });
    try {
      const res = await fetch(`${other.url}/metrics`, { headers: { authorization: `Bearer ${other.srv.adminToken}` } });
      expect(res.status).toBe(403);
      expect((await res.json()).message).toContain('127.0.0.1');
    } finally {
      await other.close();
    }
  });
});

describe('GET /readyz', () => {
  it('says ready with the browsers and every store it checked', async () => {
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ status: 'ready', reasons: [], engine: true, browsers: { total: 1, ready: 1, down: [] } });
    expect(Object.keys(body.stores).sort()).toEqual(
      ['accounts.db', 'batch-items.db', 'batches.db', 'checks.db', 'destinations.db', 'files', 'idempotency.db', 'jobs.db', 'keys.db', 'logins.db', 'monitors.db', 'settings.db', 'sources', 'stats.db', 'usage.db', 'webhooks.db'].sort(),
    );
    expect(Object.values(body.stores).every((s) => s === 'ok')).toBe(true);
  });

  it('answers 503 naming the store that cannot be used', async () => {
    const sources = path.join(server.dataDir, 'sources');
    await fs.rename(sources, `${sources}.away`);
    try {
      const res = await fetch(`${server.url}/readyz`);
      expect(res.status).toBe(503);
      const body = await res.json();
      expect(body.status).toBe('not ready');
      expect(body.stores.sources).toBe('missing');
      expect(body.reasons).toEqual([`sources in ${server.dataDir} is missing`]);
    } finally {
      await fs.rename(`${sources}.away`, sources);
    }
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});
