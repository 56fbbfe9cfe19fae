import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { toApiError } from '../../server/api/error-responses.js';
import { lineLogger, silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import type { DeliveryDoc } from '../../server/store/records/delivery-record.js';
import type { JobRecord } from '../../server/store/records/job-record.js';
import type { Stores } from '../../server/store/stores.js';
import { answered } from '../helpers/error-answer.js';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';

// Real NeDB files on a small tmpfs that the tests fill up.

let disk: Tmpfs | undefined;
let dir = '';
let n = 0;

beforeAll(async () => {
  const mounted = await mountTmpfs('1m', 'sa-datafile-');
  if (typeof mounted === 'string') console.warn(`skipping the full-disk datastore tests: ${mounted}`);
  else disk = mounted;
});

afterEach(async () => {
  await disk?.free();
});

afterAll(async () => {
  await disk?.unmount();
});

/** A fresh data directory on the tmpfs for each test. */
async function dataDir(): Promise<string> {
  dir = path.join(disk!.dir, `data-${++n}`);
  await fs.mkdir(dir);
  return dir;
}

const ids = async (stores: Stores) => (await stores.jobs.list({ limit: 1000 })).map((d) => d._id).sort();
/** A job record with only the fields a test cares about. */
const job = (id: string, fields: Partial<JobRecord> = {}) => ({ _id: id, created_at: 0, ...fields }) as JobRecord;

describe('a datastore on a full disk', () => {
  it('refuses a write with a 507 and keeps no part of it, in memory or on file', async (ctx) => {
    if (!disk) return ctx.skip();
    const stores = await openNedbStores(await dataDir(), silentLogger);
    await stores.jobs.insert([job('a', { url: 'one' })]);
    // jobs.db keeps whatever room its last page has, so the large write below is cut short.
    await disk.fill();

    const refused = await stores.jobs.insert([job('big', { url: 'x'.repeat(20_000) })]).then(() => null, (err: unknown) => err);
    expect(refused).toMatchObject({ code: 'ENOSPC' });
    expect(toApiError(refused)).toMatchObject({ status: 507 });
    expect(await stores.jobs.get('big')).toBeNull();
    await expect(stores.jobs.update('a', { url: 'y'.repeat(20_000) }).catch(answered)).rejects.toMatchObject({ status: 507 });
    expect(await stores.jobs.get('a')).toMatchObject({ url: 'one' });
    // Room for a short line may be left; fill it so the removal meets a full disk too.
    await disk.fill([path.join(dir, 'jobs.db')]);
    await expect(stores.jobs.remove(['a']).catch(answered)).rejects.toMatchObject({ status: 507 });
    expect(await stores.jobs.get('a')).toMatchObject({ url: 'one' });

    const text = await fs.readFile(path.join(dir, 'jobs.db'), 'utf8');
    expect(text).not.toMatch(/big|xxx|yyy/);

    await disk.free();
    await stores.jobs.insert([job('c')]);
    const logs: string[] = [];
    const reopened = await openNedbStores(dir, lineLogger((line) => logs.push(line)));
    expect(await ids(reopened)).toEqual(await ids(stores));
    expect(await ids(reopened)).toContain('c');
    expect(logs).toEqual([]);
  });

  it('opens a file a crash cut short, leaves it as it is, and appends after it safely', async (ctx) => {
    if (!disk) return ctx.skip();
    const first = await openNedbStores(await dataDir(), silentLogger);
    await first.jobs.insert([job('a'), job('b')]);
    await fs.appendFile(path.join(dir, 'jobs.db'), '{"_id":"cut","url":"http://exa');
    await disk.fill();

    const logs: string[] = [];
    const stores = await openNedbStores(dir, lineLogger((line) => logs.push(line)));
    expect(await ids(stores)).toEqual(['a', 'b']);
    expect(logs.some((l) => /jobs\.db had 1 unreadable line/.test(l) && /no copy could be kept/.test(l))).toBe(true);
    expect((await fs.readdir(dir)).filter((f) => f.includes('.corrupt'))).toEqual([]);
    expect(await fs.readFile(path.join(dir, 'jobs.db'), 'utf8')).toMatch(/"cut"/);

    await disk.free();
    await stores.jobs.insert([job('after')]);
    const reopened = await openNedbStores(dir, silentLogger);
    expect(await ids(reopened)).toEqual(['a', 'after', 'b']);
    // With room again, the start keeps its copy of the damaged file.
    expect((await fs.readdir(dir)).filter((f) => f.includes('.corrupt'))).toHaveLength(1);
  });

  it('leaves no half-written file behind when compacting fails', async (ctx) => {
    if (!disk) return ctx.skip();
    const stores = await openNedbStores(await dataDir(), silentLogger);
    // Every store has something to rewrite, so several rewrites are under way when the first fails.
    const pad = 'x'.repeat(5000);
    await stores.jobs.insert([job('a', { url: pad })]);
    await stores.accounts.insert({ email: pad } as never);
    await stores.keys.insert({ name: pad, hash: 'h', account_id: 'a' } as never);
    await stores.usage.add(pad, { day: '2026-11-25', month: '2026-11' }, 1);
    await stores.stats.countEnd(0, 'completed');
    await stores.settings.save({ public_base_url: `http://${pad}` });
    await stores.deliveries.insert({ _id: 'd', body: pad } as DeliveryDoc);
    await disk.fill();
    await expect(stores.compact().catch(answered)).rejects.toMatchObject({ status: 507 });
    expect((await fs.readdir(dir)).filter((f) => f.endsWith('~'))).toEqual([]);
  });
});
