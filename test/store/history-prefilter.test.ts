import fs from 'node:fs/promises';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { JobRecord } from '../../server/jobs/job-record.js';
import { lineLogger, silentLogger } from '../../server/logger.js';
import { FileStore } from '../../server/store/file-store.js';
import { openNedbStores } from '../../server/store/nedb-stores.js';
import type { SettingsStore, Stores } from '../../server/store/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

// jobs.db past the history period, on real NeDB files: what a start leaves out of the file
// before loading it, judged by each job's last line.

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 23);
let dirs: string[] = [];

afterEach(async () => {
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  dirs = [];
});

const cutoffAt = (days: number) => async () => NOW - days * DAY;
const ids = async (stores: Stores) => (await stores.jobs.list({ limit: 1000 })).map((d) => d._id).sort();
/** A job record with only the fields a test cares about. */
const job = (fields: Partial<JobRecord>) => fields as JobRecord;

describe('opening jobs.db with a history period', () => {
  it('leaves out every line of the jobs that ended before it, and keeps the rest as they were', async () => {
    const dir = await tempDir('sa-prefilter-');
    dirs.push(dir);
    const first = await openNedbStores(dir, silentLogger);
    const files = new FileStore(dir);
    await files.init();
    const at = (days: number) => NOW - days * DAY;
    // An old job with several lines (pending, processing, completed), whose files are still there.
    await first.jobs.insert([job({ _id: 'old', status: 'pending', created_at: at(200), image_file: null, expired: false })]);
    await first.jobs.update('old', { status: 'processing' });
    await first.jobs.update('old', { status: 'completed', image_file: 'oldimageoldimageoldimage.png' });
    await files.writeImage('oldimageoldimageoldimage.png', Buffer.from('png'));
    await files.writeSource('old', '<html></html>');
    await first.jobs.insert([job({ _id: 'old-expired', status: 'failed', created_at: at(120), expired: true })]);
    // Old but never ended: a start must not lose a job still to run.
    await first.jobs.insert([job({ _id: 'old-pending', status: 'pending', created_at: at(150) })]);
    await first.jobs.insert([job({ _id: 'recent', status: 'completed', created_at: at(5), image_file: 'recentrecentrecentrecent.png', expired: false })]);
    await files.writeImage('recentrecentrecentrecent.png', Buffer.from('png'));
    // Removed already: its deletion line and its earlier line both go with nothing to say.
    await first.jobs.insert([job({ _id: 'gone', status: 'completed', created_at: at(300) })]);
    await first.jobs.remove(['gone']);
    await fs.appendFile(path.join(dir, 'jobs.db'), '{"_id":"cut","status":"compl\n');
    const linesBefore = (await fs.readFile(path.join(dir, 'jobs.db'), 'utf8')).split('\n').length;

    const logs: string[] = [];
    const stores = await openNedbStores(dir, lineLogger((line) => logs.push(line)), { historyCutoff: cutoffAt(90) });
    expect(await ids(stores)).toEqual(['old-pending', 'recent']);
    const text = await fs.readFile(path.join(dir, 'jobs.db'), 'utf8');
    expect(text).not.toMatch(/"old"|old-expired/);
    // The unreadable line is left for the loader, which reports it and keeps the file's copy.
    expect(logs.some((l) => /jobs\.db had 1 unreadable line/.test(l))).toBe(true);
    const copies = (await fs.readdir(dir)).filter((f) => f.startsWith('jobs.db.corrupt'));
    expect(copies).toHaveLength(1);
    expect(await fs.readFile(path.join(dir, copies[0]), 'utf8')).toContain('"cut"');
    expect(logs.some((l) => /left 2 job\(s\) past the history period/.test(l))).toBe(true);
    expect(text.split('\n').length).toBeLessThan(linesBefore);
    await expect(fs.access(path.join(dir, 'files', 'oldimageoldimageoldimage.png'))).rejects.toThrow();
    expect(await files.readSource('old')).toBeNull();
    await fs.access(path.join(dir, 'files', 'recentrecentrecentrecent.png'));

    // A later start has nothing to leave out.
    const later: string[] = [];
    const again = await openNedbStores(dir, lineLogger((line) => later.push(line)), { historyCutoff: cutoffAt(90) });
    expect(await ids(again)).toEqual(['old-pending', 'recent']);
    expect(later.filter((l) => /history period/.test(l))).toEqual([]);
    expect((await fs.readdir(dir)).filter((f) => f.includes('~'))).toEqual([]);
  });

  it('loads the whole file without a history period, and reads the period from the saved settings', async () => {
    const dir = await tempDir('sa-prefilter-');
    dirs.push(dir);
    const first = await openNedbStores(dir, silentLogger);
    await first.jobs.insert([job({ _id: 'a', status: 'completed', created_at: NOW - 100 * DAY })]);
    await first.settings.save({ history_days: 365 });
    expect(await ids(await openNedbStores(dir, silentLogger))).toEqual(['a']);
    const fromSettings = async (settings: SettingsStore) => NOW - (await settings.load())!.history_days! * DAY;
    expect(await ids(await openNedbStores(dir, silentLogger, { historyCutoff: fromSettings }))).toEqual(['a']);
    expect(await ids(await openNedbStores(dir, silentLogger, { historyCutoff: cutoffAt(30) }))).toEqual([]);
  });
});
