import fs from 'node:fs/promises';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { Retention } from '../../server/jobs/retention.js';
import { QuotaService } from '../../server/limits/quota.js';
import { silentLogger } from '../../server/logger.js';
import { SettingsService } from '../../server/settings.js';
import { DirectoryFileStore as FileStore } from '../../server/store/file-store.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import type { DeliveryDoc } from '../../server/store/records/delivery-record.js';
import type { JobRecord } from '../../server/store/records/job-record.js';
import type { Stores } from '../../server/store/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

// The history period on real NeDB files and a real files directory: jobs older than
// history_days leave the store with their files and webhook deliveries, jobs.db shrinks, and the
// per-day usage the charts and calls_this_month read stays.

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 23, 12);
const clock = { now: () => NOW };
let dirs: string[] = [];

afterEach(async () => {
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  dirs = [];
});

const BASE_SETTINGS = {
  concurrency: 2,
  queue_limit: 100,
  account_queue_share: 50,
  navigation_timeout_ms: 30_000,
  capture_timeout_ms: 30_000,
  retention_days: 7,
  history_days: 90,
  full_page_max_height: 16_384,
  egress_allow: [],
  egress_allow_command_line: [],
  egress_deny_lan: false,
  public_base_url: null,
};

async function setup() {
  const dir = await tempDir('sa-history-');
  dirs.push(dir);
  const stores: Stores = await openNedbStores(dir, silentLogger);
  const files = new FileStore(dir);
  await files.init();
  const settings = new SettingsService(stores.settings, BASE_SETTINGS);
  const retention = new Retention({ stores, files, settings, clock, log: silentLogger });
  return { dir, stores, files, settings, retention };
}

/** Every stored job's id, sorted. */
const ids = async (stores: Stores) => (await stores.jobs.list({ limit: 10_000 })).map((j) => j._id).sort();

/** A completed job `ageDays` old, with an image, its thumbnail and its page source on disk. */
async function job(env: Awaited<ReturnType<typeof setup>>, id: string, ageDays: number, expired = false) {
  const created = NOW - ageDays * DAY;
  const image = `${id.padEnd(24, 'x').slice(0, 24)}.png`;
  if (!expired) {
    await env.files.writeImage(image, Buffer.from('png'));
    await env.files.writeSource(id, '<html></html>');
  }
  await env.stores.jobs.insert([{ _id: id, account_id: 'acc', status: 'completed', created_at: created, completed_at: created + 1000, image_file: image, expired, url: 'x'.repeat(500) } as JobRecord]);
  await env.stores.deliveries.insert({ _id: `d-${id}`, job_id: id, status: 'succeeded', created_at: created + 1000 } as DeliveryDoc);
  return { image: path.join(env.dir, 'files', image), source: env.files.readSource.bind(env.files, id) };
}

describe('the history period', () => {
  it('removes jobs older than history_days with their files and deliveries, keeps newer ones and the usage per day', async () => {
    const env = await setup();
    const quota = new QuotaService(env.stores.usage, clock);
    await quota.reserve({ _id: 'acc', daily_limit: 1000, monthly_limit: 100_000 }, 3);
    const usageBefore = await quota.daily('acc', 30);

    const recent = await job(env, 'job_recent', 10, true);
    const edge = await job(env, 'job_edge', 89);
    const old = await job(env, 'job_old', 91);
    const ancient = await job(env, 'job_ancient', 400, true);
    await env.stores.jobs.insert([{ _id: 'job_waiting', status: 'pending', created_at: NOW - 200 * DAY } as JobRecord]);
    for (let i = 0; i < 300; i++) await job(env, `job_bulk${i}`, 100 + (i % 200), true);
    const sizeBefore = (await fs.stat(path.join(env.dir, 'jobs.db'))).size;

    expect(await env.retention.purgeHistory()).toBe(302);
    const left = await ids(env.stores);
    expect(left).toEqual(['job_edge', 'job_recent', 'job_waiting']);
    await expect(fs.access(old.image)).rejects.toThrow();
    expect(await old.source()).toBeNull();
    await fs.access(edge.image);
    expect(await edge.source()).toBe('<html></html>');
    expect(recent).toBeDefined();
    expect(ancient).toBeDefined();
    expect((await env.stores.deliveries.list({ limit: 1000 })).map((d) => d.job_id).sort()).toEqual(['job_edge', 'job_recent']);
    // The file is rewritten without the removed documents.
    expect((await fs.stat(path.join(env.dir, 'jobs.db'))).size).toBeLessThan(sizeBefore / 10);
    expect(await quota.daily('acc', 30)).toEqual(usageBefore);
    expect((await quota.usage('acc')).month).toBe(3);

    // A shorter history takes effect at the next sweep.
    await env.settings.update({ history_days: 30 });
    expect(await env.retention.sweep()).toBeGreaterThanOrEqual(0);
    expect(await ids(env.stores)).toEqual(['job_recent', 'job_waiting']);

    // What a restart loads is what is left.
    const reopened = await openNedbStores(env.dir, silentLogger);
    expect(await reopened.jobs.count()).toBe(2);
  });

  it('removes the batches that ended before the history period, and leaves a running one however old', async () => {
    const env = await setup();
    const batch = (id: string, ageDays: number) => ({
      _id: id, account_id: 'acc', key_id: 'key', status: 'running' as const, total: 1, jobs: [], completed: 0, failed: 0,
      callback_url: null, base_url: 'http://127.0.0.1', created_at: NOW - ageDays * DAY, ended_at: null,
    });
    for (const [id, age] of [['batch_old', 100], ['batch_edge', 89], ['batch_running', 200]] as const) await env.stores.batches.insert(batch(id, age), 's');
    await env.stores.batches.end('batch_old', 'completed', NOW - 95 * DAY);
    await env.stores.batches.end('batch_edge', 'completed', NOW - 89 * DAY);
    await env.retention.purgeHistory();
    expect((await env.stores.batches.recent(10)).map((b) => b._id).sort()).toEqual(['batch_edge', 'batch_running']);
  });

  it('refuses a history_days outside 1 to 3650 naming it', async () => {
    const env = await setup();
    await expect(env.settings.update({ history_days: 0 })).rejects.toThrow(/history_days/);
    await expect(env.settings.update({ history_days: 4000 })).rejects.toThrow(/history_days/);
    expect(env.settings.get().history_days).toBe(90);
  });
});
