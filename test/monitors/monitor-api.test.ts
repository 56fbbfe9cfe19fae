import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, tempDir, type TestServer } from '../helpers/test-server.js';
import { type ChangingPage, startChangingPage } from './changing-page.js';

let server: TestServer;
let page: ChangingPage;
let key: string;
let accountId: string;
let other: string;

beforeAll(async () => {
  page = await startChangingPage();
  server = await startTestServer({ ratePerSecond: 1000 });
  ({ key, accountId } = await server.account());
  other = (await server.account()).key;
});
afterAll(async () => {
  await server?.close();
  await page?.close();
});

const create = (body: Record<string, unknown>, as = key) => server.v1('POST', '/monitors', as, body);
const every = { every_minutes: 60 };

describe('POST /v1/monitors', () => {
  it('creates a monitor with its defaults and its next run, and answers 201', async () => {
    const res = await create({ url: page.url, schedule: every, name: 'home' });
    expect(res.status).toBe(201);
    const monitor = await res.json();
    expect(monitor).toMatchObject({
      name: 'home',
      url: page.url,
      schedule: every,
      threshold: 0.001,
      mask_selectors: [],
      callback_url: null,
      paused: false,
      baseline: 'previous',
      pinned_job_id: null,
      last_check: null,
    });
    expect(monitor.id).toMatch(/^mon_[0-9a-f]{24}$/);
    const next = Date.parse(monitor.next_run_at);
    expect(next - Date.parse(monitor.created_at)).toBe(3_600_000);
  });

  it('takes every capture option as the screenshot request does, and keeps secret fields sealed', async () => {
    const res = await create({
      url: page.url,
      schedule: { cron: '*/5 * * * *', timezone: 'Europe/Paris' },
      full_page: true,
      width: 1280,
      format: 'webp',
      quality: 70,
      hide_selectors: ['.ad'],
      headers: { 'X-Token': 'secret-value' },
    });
    expect(res.status).toBe(201);
    const monitor = await res.json();
    expect(monitor.capture).toMatchObject({ full_page: true, width: 1280, format: 'webp', quality: 70, hide_selectors: ['.ad'] });
    expect(monitor.secret_fields).toEqual(['headers']);
    expect(JSON.stringify(monitor)).not.toContain('secret-value');
    expect(new Date(monitor.next_run_at).getUTCMinutes() % 5).toBe(0);
  });

  it.each([
    [{ schedule: every }, 'url'],
    [{ url: page?.url ?? 'http://127.0.0.1/', schedule: { every_minutes: 0 } }, 'schedule'],
    [{ url: 'http://127.0.0.1/', schedule: { cron: '* * * * * *' } }, 'schedule'],
    [{ url: 'http://127.0.0.1/', schedule: { cron: 'every day at noon' } }, 'schedule'],
    [{ url: 'http://127.0.0.1/', schedule: { cron: '0 * * * *', timezone: 'Mars/Olympus' } }, 'schedule'],
    [{ url: 'http://127.0.0.1/' }, 'schedule'],
    [{ url: 'http://127.0.0.1/', schedule: every, threshold: 2 }, 'threshold'],
    [{ url: 'http://127.0.0.1/', schedule: every, format: 'pdf' }, 'format'],
    [{ url: 'http://127.0.0.1/', schedule: every, fullpage: true }, 'fullpage'],
    [{ url: 'http://127.0.0.1/', schedule: every, cache_ttl: 60 }, 'cache_ttl'],
    [{ url: 'http://127.0.0.1/', schedule: every, baseline: 'first' }, 'baseline'],
    [{ url: 'ftp://127.0.0.1/', schedule: every }, 'url'],
    [{ url: 'http://127.0.0.1/', schedule: every, callback_url: 'javascript:alert(1)' }, 'callback_url'],
  ])('refuses %j with 400 naming %s', async (body, field) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    const answer = await res.json();
    expect(answer.error).toBe('Bad request');
    expect(answer.message).toContain(field);
  });

  it('refuses an interval under the floor the admin set', async () => {
    expect((await server.admin('PUT', '/settings', { monitor_min_minutes: 10 })).status).toBe(200);
    try {
      const res = await create({ url: page.url, schedule: { every_minutes: 5 } });
      expect(res.status).toBe(400);
      expect((await res.json()).message).toContain('at least 10');
      expect((await create({ url: page.url, schedule: { cron: '*/5 * * * *' } })).status).toBe(400);
      expect((await create({ url: page.url, schedule: { every_minutes: 10 } })).status).toBe(201);
    } finally {
      await server.admin('PUT', '/settings', { monitor_min_minutes: 1 });
    }
  });

  it('proposes masks for a new monitor unless told not to', async () => {
    expect(await (await create({ url: page.url, schedule: every })).json()).toMatchObject({ propose_masks: true, proposed_masks: [] });
    expect(await (await create({ url: page.url, schedule: every, propose_masks: false })).json()).toMatchObject({ propose_masks: false });
  });

  it('proposes masks for a monitor the control panel creates (POST /admin/api/monitors) too', async () => {
    const created = await server.admin('POST', '/monitors', { account_id: accountId, url: page.url, schedule: every });
    expect(created.status).toBe(201);
    expect(created.body.propose_masks).toBe(true);
  });

  it('answers 401 without a key', async () => {
    expect((await server.v1('POST', '/monitors', undefined, { url: page.url, schedule: every })).status).toBe(401);
  });
});

describe('a monitor of one account', () => {
  it('is listed, read, changed and removed by that account only; another account gets 404', async () => {
    const monitor = await (await create({ url: page.url, schedule: every, name: 'mine' })).json();
    const list = await (await server.v1('GET', '/monitors', key)).json();
    expect(list.monitors.map((m: { id: string }) => m.id)).toContain(monitor.id);
    const theirs = await (await server.v1('GET', '/monitors', other)).json();
    expect(theirs.monitors.map((m: { id: string }) => m.id)).not.toContain(monitor.id);
    for (const [method, route] of [
      ['GET', `/monitors/${monitor.id}`],
      ['PATCH', `/monitors/${monitor.id}`],
      ['DELETE', `/monitors/${monitor.id}`],
      ['POST', `/monitors/${monitor.id}/run`],
      ['GET', `/monitors/${monitor.id}/checks`],
    ]) {
      const res = await server.v1(method, route, other, method === 'PATCH' ? { name: 'x' } : undefined);
      expect(res.status, `${method} ${route}`).toBe(404);
    }

    const paused = await (await server.v1('PATCH', `/monitors/${monitor.id}`, key, { paused: true, threshold: 0.05 })).json();
    expect(paused).toMatchObject({ paused: true, threshold: 0.05, next_run_at: null, name: 'mine' });
    const resumed = await (await server.v1('PATCH', `/monitors/${monitor.id}`, key, { paused: false, schedule: { every_minutes: 30 } })).json();
    expect(resumed.schedule).toEqual({ every_minutes: 30 });
    expect(resumed.next_run_at).not.toBeNull();
    const moved = await (await server.v1('PATCH', `/monitors/${monitor.id}`, key, { html: '<p>hi</p>' })).json();
    expect(moved.url).toBe('about:html');
    expect(moved.secret_fields).toEqual(['html']);
    expect((await server.v1('PATCH', `/monitors/${monitor.id}`, key, { schedule: { every_minutes: 0 } })).status).toBe(400);

    expect((await server.v1('DELETE', `/monitors/${monitor.id}`, key)).status).toBe(204);
    expect((await server.v1('GET', `/monitors/${monitor.id}`, key)).status).toBe(404);
  });
});

describe('a monitor stored before propose_masks existed', () => {
  it('still proposes none, and keeps reading so after a restart', async () => {
    const dataDir = path.join(await tempDir('sa-monitor-before-proposals-'), 'data');
    const before = await startTestServer({ dataDir, ratePerSecond: 1000 });
    const { key: theirs } = await before.account();
    const { id } = await (await before.v1('POST', '/monitors', theirs, { url: page.url, schedule: every, paused: true })).json();
    await before.srv.close();
    // The record as an earlier version wrote it: without the field.
    const file = path.join(dataDir, 'monitors.db');
    const lines = (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    await fs.writeFile(file, lines.map(({ propose_masks: _, ...rest }) => `${JSON.stringify(rest)}\n`).join(''));
    const after = await startTestServer({ dataDir, ratePerSecond: 1000 });
    try {
      expect(await (await after.v1('GET', `/monitors/${id}`, theirs)).json()).toMatchObject({ id, propose_masks: false });
    } finally {
      await after.close();
    }
  });
});
