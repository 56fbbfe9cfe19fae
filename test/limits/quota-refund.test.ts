import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { QuotaService } from '../../server/limits/quota.js';
import { silentLogger } from '../../server/logger.js';
import { DiskFullError } from '../../server/store/disk-full.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { answered } from '../helpers/error-answer.js';
import { tempDir } from '../helpers/temp-dir.js';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';

const clock = { now: () => Date.UTC(2026, 10, 20, 12) };
const account = { _id: 'acc1', daily_limit: 100, monthly_limit: 1000 };
const dirs: string[] = [];
let disk: Tmpfs | undefined;

beforeAll(async () => {
  const mounted = await mountTmpfs('1m', 'sa-quota-');
  if (typeof mounted === 'string') console.warn(`skipping the full-disk quota test: ${mounted}`);
  else disk = mounted;
});

afterAll(async () => {
  await disk?.unmount();
  await Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true })));
});

async function quotaIn(dir: string) {
  return new QuotaService((await openNedbStores(dir, silentLogger)).usage, clock);
}

describe('calls charged for work that failed', () => {
  it('are given back, also after a restart', async () => {
    const dir = await tempDir('sa-quota-');
    dirs.push(dir);
    const quota = await quotaIn(dir);
    await quota.reserve(account, 1);
    const failing = quota.chargeFor(account, 3, () => Promise.reject(new Error('the jobs could not be stored')));
    await expect(failing).rejects.toThrow('the jobs could not be stored');
    await expect(quota.chargeFor(account, 2, async () => 'stored')).resolves.toBe('stored');
    expect(await quota.usage('acc1')).toEqual({ today: 3, month: 3 });
    expect(await (await quotaIn(dir)).usage('acc1')).toEqual({ today: 3, month: 3 });
  });

  it('are given back at once when the disk refuses the refund, and the refund is stored once there is room', async (ctx) => {
    if (!disk) return ctx.skip();
    const dir = path.join(disk.dir, 'data');
    await fs.mkdir(dir);
    const quota = await quotaIn(dir);
    await quota.reserve(account, 1);
    const failing = quota.chargeFor(account, 2, async () => {
      await disk!.fill([path.join(dir, 'usage.db')]);
      throw new DiskFullError(new Error('ENOSPC'));
    });
    await expect(failing.catch(answered)).rejects.toMatchObject({ status: 507 });
    expect(await quota.usage('acc1')).toEqual({ today: 1, month: 1 });

    await disk.free();
    await quota.reserve(account, 1);
    expect(await quota.usage('acc1')).toEqual({ today: 2, month: 2 });
    expect(await (await quotaIn(dir)).usage('acc1')).toEqual({ today: 2, month: 2 });
  });
});
