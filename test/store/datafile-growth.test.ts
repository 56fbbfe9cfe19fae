import fs from 'node:fs/promises';
import path from 'node:path';

import Datastore from 'nedb-promises';
import { afterEach, describe, expect, it } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { FOLD_FLOOR_BYTES, FOLD_GROWTH, loadGuarded } from '../../server/store/nedb/datafile-guard.js';
import { tempDir } from '../helpers/temp-dir.js';

// A real NeDB datafile whose one document changes again and again: NeDB appends its whole line each time.

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

async function openGuarded(filename: string) {
  const store = Datastore.create({ filename, autoload: false });
  await loadGuarded(store, { filename, endsMidLine: false, rewrite: true, log: silentLogger });
  return store;
}

const LARGE = 256 * 1024;

describe('a datafile that grows', () => {
  it(`is folded once it passes ${FOLD_GROWTH} times its live size, so 40 changes of a 256 KB document keep it under 2 MB`, async () => {
    const dir = await tempDir('sa-growth-');
    dirs.push(dir);
    const filename = path.join(dir, 'things.db');
    const store = await openGuarded(filename);
    await store.insert({ _id: 'doc', body: 'x'.repeat(LARGE), n: 0 });
    let largest = 0;
    for (let n = 1; n <= 40; n++) {
      await store.update({ _id: 'doc' }, { $set: { n } });
      largest = Math.max(largest, (await fs.stat(filename)).size);
    }
    // Unfolded, the file would hold 41 lines of 256 KB: 10.5 MB.
    expect(largest).toBeLessThan(FOLD_FLOOR_BYTES + 4 * LARGE);
    const again = await openGuarded(filename);
    expect(await again.findOne({ _id: 'doc' })).toMatchObject({ n: 40 });
    expect(await again.count({})).toBe(1);
  });

  it('is not folded while it stays small, however often it changes', async () => {
    const dir = await tempDir('sa-growth-');
    dirs.push(dir);
    const filename = path.join(dir, 'things.db');
    const store = await openGuarded(filename);
    await store.insert({ _id: 'doc', n: 0 });
    for (let n = 1; n <= 200; n++) await store.update({ _id: 'doc' }, { $set: { n } });
    expect((await fs.readFile(filename, 'utf8')).trim().split('\n')).toHaveLength(201);
  });
});
