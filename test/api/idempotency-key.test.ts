import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { requestFingerprint } from '../../server/jobs/idempotent-requests.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// POST /v1/screenshot with an Idempotency-Key: a retry of the same request gets the same jobs,
// on a real server with its NeDB store (the PostgreSQL store: test/store/idempotency-conformance.test.ts).

let server: TestServer;
/** Added to the real time by the server's clock: the test moves it past a day. */
let later = 0;

beforeAll(async () => {
  server = await startTestServer({ ratePerSecond: 1000 }, { clock: { now: () => Date.now() + later } });
});
afterAll(async () => {
  await server?.close();
});

/** A page that answers nothing: the jobs fail fast, and the test is about their creation. */
const PAGE = 'http://127.0.0.1:9/';

const post = (key: string, body: unknown, idempotencyKey?: string) =>
  server.v1('POST', '/screenshot', key, body, idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey });
const callsToday = async (key: string) => (await (await server.v1('GET', '/usage', key)).json()).calls_today as number;

describe('POST /v1/screenshot with an Idempotency-Key', () => {
  it('answers a retry of the same request with the same jobs and status, counting no call', async () => {
    const { key } = await server.account();
    const body = { url: PAGE, devices: ['desktop', 'mobile'] };
    const first = await post(key, body, 'order-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const created = await first.json();
    const retry = await post(key, body, 'order-1');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(created);
    expect(await callsToday(key)).toBe(2);
  });

  it('takes the same body spelt otherwise (key order, spaces) as the same request, and the key in quotes as the draft writes it', async () => {
    const { key } = await server.account();
    const created = await (await post(key, { url: PAGE, full_page: true, devices: ['mobile'] }, 'spelt')).json();
    const respelt = await post(key, `{ "devices": [ "mobile" ],\n  "full_page": true, "url": "${PAGE}" }`, '"spelt"');
    expect(respelt.status).toBe(201);
    expect((await respelt.json()).job_id).toBe(created.job_id);
    expect(await callsToday(key)).toBe(1);
  });

  it('answers 422 for the key with another body, creating nothing', async () => {
    const { key } = await server.account();
    await post(key, { url: PAGE }, 'reused');
    const other = await post(key, { url: `${PAGE}other` }, 'reused');
    expect(other.status).toBe(422);
    expect(await other.json()).toEqual({
      error: 'Unprocessable content',
      message: 'This Idempotency-Key was used in the last 24 hours with a different request body; use a new key for a new request',
    });
    expect(await callsToday(key)).toBe(1);
  });

  it('answers 409 while the first request with the key is still being answered, then replays its answer', async () => {
    const { key, accountId } = await server.account();
    const body = { url: PAGE };
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    const inFlight = server.srv.services.idempotency.once(accountId, 'POST /v1/screenshot', 'slow', requestFingerprint(body), async () => {
      await held;
      return { answer: { status: 201, body: { job_id: 'job_000000000000000000000001' } }, keep: true };
    });
    const meanwhile = await post(key, body, 'slow');
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.headers.get('retry-after')).toBe('1');
    expect(await meanwhile.json()).toMatchObject({ error: 'Conflict', message: expect.stringMatching(/still being answered/) });
    answer();
    await inFlight;
    const after = await post(key, body, 'slow');
    expect(after.status).toBe(201);
    expect(await after.json()).toEqual({ job_id: 'job_000000000000000000000001' });
    expect(await callsToday(key)).toBe(0);
  });

  it('creates one set of jobs for requests sent at once with one key', async () => {
    const { key } = await server.account();
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(key, { url: PAGE }, 'at-once')));
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const ids = new Set(await Promise.all(answers.filter((a) => a.status === 201).map(async (a) => (await a.json()).job_id)));
    expect(ids.size).toBe(1);
    expect(await callsToday(key)).toBe(1);
  });

  it('keeps each account its own keys', async () => {
    const one = await server.account();
    const two = await server.account();
    const a = await (await post(one.key, { url: PAGE }, 'shared-name')).json();
    const b = await (await post(two.key, { url: PAGE }, 'shared-name')).json();
    expect(b.job_id).not.toBe(a.job_id);
    expect(await callsToday(two.key)).toBe(1);
  });

  it('keeps nothing for a refused request: once the refusal is lifted, its retry runs', async () => {
    const { key, accountId } = await server.account({ daily_limit: 0 });
    const refused = await post(key, { url: PAGE }, 'after-raise');
    expect(refused.status).toBe(429);
    await server.admin('PATCH', `/accounts/${accountId}`, { daily_limit: 10 });
    const retried = await post(key, { url: PAGE }, 'after-raise');
    expect(retried.status).toBe(201);
    expect(await callsToday(key)).toBe(1);
  });

  it('forgets a key after 24 hours: the same request then makes new jobs', async () => {
    const { key } = await server.account();
    const first = await (await post(key, { url: PAGE }, 'daily')).json();
    later = 24 * 3_600_000 + 1_000;
    try {
      const next = await post(key, { url: PAGE }, 'daily');
      expect(next.status).toBe(201);
      expect((await next.json()).job_id).not.toBe(first.job_id);
    } finally {
      later = 0;
    }
  });

  it.each([
    ['empty', ''],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['with a control character', 'a\tb'],
    ['of non-ASCII characters', 'clé'],
  ])('refuses a key %s with 400 naming the header, creating nothing', async (_what, idempotencyKey) => {
    const { key } = await server.account();
    const res = await post(key, { url: PAGE }, idempotencyKey);
    expect(res.status).toBe(400);
    expect((await res.json()).message).toMatch(/^Idempotency-Key must be 1 to 255 printable ASCII characters/);
    expect(await callsToday(key)).toBe(0);
  });

  it('takes a key of 255 printable characters', async () => {
    const { key } = await server.account();
    const longest = `${' !'.repeat(127)}~`;
    expect(longest).toHaveLength(255);
    expect((await post(key, { url: PAGE }, longest)).status).toBe(201);
  });
});
