import fs from 'node:fs/promises';

import { afterEach, describe, expect, it } from 'vitest';

import { toApiError } from '../../server/api/error-responses.js';
import { QuotaService } from '../../server/limits/quota.js';
import { RateLimiter } from '../../server/limits/rate-limiter.js';
import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { answered } from '../helpers/error-answer.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => fs.rm(d, { recursive: true, force: true })));
});

async function quotaAt(now: { t: number }, dir?: string) {
  const dataDir = dir ?? (await tempDir());
  dirs.push(dataDir);
  const stores = await openNedbStores(dataDir, silentLogger);
  return { quota: new QuotaService(stores.usage, { now: () => now.t }), dataDir };
}

const account = { _id: 'acc1', daily_limit: 5, monthly_limit: 8 };

describe('daily and monthly quota', () => {
  it('never over-admits when many requests arrive at once at the limit', async () => {
    const clock = { t: Date.UTC(2026, 10, 20, 12) };
    const { quota } = await quotaAt(clock);
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => quota.reserve(account, 1)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect((await quota.usage('acc1')).today).toBe(5);
  });

  it('refuses a request that needs more calls than remain, and does not count it', async () => {
    const clock = { t: Date.UTC(2026, 10, 20, 12) };
    const { quota } = await quotaAt(clock);
    await quota.reserve(account, 3);
    await expect(quota.reserve(account, 3).catch(answered)).rejects.toMatchObject({ status: 429, title: 'Rate limit exceeded' });
    expect((await quota.usage('acc1')).today).toBe(3);
  });

  it('says the daily limit in requests per day and when to retry', async () => {
    const clock = { t: Date.UTC(2026, 10, 20, 23, 59, 30) };
    const { quota } = await quotaAt(clock);
    await quota.reserve(account, 5);
    const err = toApiError(await quota.reserve(account, 1).catch((e) => e));
    expect(err.message).toMatch(/5 requests per day/);
    expect(err.extra.retry_after).toBe(30);
    expect(err.headers['Retry-After']).toBe('30');
  });

  it('resets at 00:00 UTC and enforces the monthly limit across days', async () => {
    const clock = { t: Date.UTC(2026, 10, 20, 12) };
    const { quota } = await quotaAt(clock);
    await quota.reserve(account, 5);
    clock.t = Date.UTC(2026, 10, 21, 0, 0, 1);
    await quota.reserve(account, 3);
    const err = await quota.reserve(account, 1).catch((e) => e);
    expect(err.message).toMatch(/Monthly limit of 8/);
    clock.t = Date.UTC(2026, 11, 1, 0, 0, 1);
    await expect(quota.reserve(account, 1)).resolves.toEqual({ today: 1, month: 1 });
  });

  it('keeps the counters across a restart', async () => {
    const clock = { t: Date.UTC(2026, 10, 20, 12) };
    const first = await quotaAt(clock);
    await first.quota.reserve(account, 4);
    const second = await quotaAt(clock, first.dataDir);
    expect(await second.quota.usage('acc1')).toEqual({ today: 4, month: 4 });
  });

  it('reports the rate-limit headers, never negative', async () => {
    const clock = { t: Date.UTC(2026, 10, 20, 12) };
    const { quota } = await quotaAt(clock);
    await quota.reserve(account, 5);
    expect(await quota.headers({ ...account, daily_limit: 3 })).toEqual({
      'X-RateLimit-Limit': '3',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(Date.UTC(2026, 10, 21) / 1000),
    });
  });

  it('lists per-day counts oldest first', async () => {
    const clock = { t: Date.UTC(2026, 10, 19, 12) };
    const { quota } = await quotaAt(clock);
    await quota.reserve(account, 2);
    clock.t = Date.UTC(2026, 10, 20, 12);
    await quota.reserve(account, 1);
    expect(await quota.daily('acc1', 3)).toEqual([
      { date: '2026-11-18', count: 0 },
      { date: '2026-11-19', count: 2 },
      { date: '2026-11-20', count: 1 },
    ]);
  });
});

describe('requests per second', () => {
  it('admits ten requests in a second and refuses the eleventh with a wait of at least a second', () => {
    const clock = { t: 1_000_000 };
    const limiter = new RateLimiter({ now: () => clock.t }, 10);
    for (let i = 0; i < 10; i++) expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(1);
    expect(limiter.take('b')).toBe(0);
    clock.t += 1000;
    expect(limiter.take('a')).toBe(0);
  });
});
