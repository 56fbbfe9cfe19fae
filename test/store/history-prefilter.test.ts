import fs from 'node:fs/promises';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { lineLogger, silentLogger } from '../../server/logger.js';
import { DirectoryFileStore as FileStore } from '../../server/store/file-store.js';
import { prepareJobsFile } from '../../server/store/nedb/history-prefilter.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import type { JobRecord } from '../../server/store/records/job-record.js';
import type { SettingsStore, Stores } from '../../server/store/stores.js';
import { answered } from '../helpers/error-answer.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startTestServer } from '../helpers/test-server.js';
import { mountTmpfs } from '../helpers/tmpfs.js';

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
    // The start only reads: the lines and files of the jobs left out stay until the sweep drops them.
    expect(stores.leftOut?.pending()).toBe(2);
    expect(await fs.readFile(path.join(dir, 'jobs.db'), 'utf8')).toMatch(/"old"/);
    await fs.access(path.join(dir, 'files', 'oldimageoldimageoldimage.png'));
    expect(await stores.leftOut?.drop()).toBe(2);
    expect(stores.leftOut?.pending()).toBe(0);
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

  it('judges a line by its top-level fields alone, whatever nested objects, escapes or key order say', async () => {
    const dir = await tempDir('sa-prefilter-');
    dirs.push(dir);
    const old = NOW - 200 * DAY;
    const recent = NOW - 5 * DAY;
    // What each line should come to, judged as JSON.parse reads it.
    const lines: Array<[string, Record<string, unknown>]> = [
      ['plain', { status: 'completed', created_at: old, expired: true }],
      ['nested-recent', { options: { status: 'completed', created_at: old, list: [{ expired: true }] }, status: 'completed', created_at: recent }],
      ['nested-old', { status: 'failed', options: { created_at: recent, status: 'pending', s: '{"_id":"x"' }, created_at: old, expired: true }],
      ['nested-after', { status: 'completed', created_at: recent, options: { created_at: old, list: [{ status: 'failed' }] } }],
      ['pending-nested-ended', { status: 'pending', created_at: old, list: [{ status: 'completed' }, 'x'] }],
      ['quoted', { url: 'https://x/"created_at":1,"status":"pending"}', status: 'completed', created_at: old, expired: true }],
      ['esc"aped', { status: 'completed', created_at: old, expired: true }],
      ['key-first', { created_at: old, expired: true, status: 'completed' }],
      ['pending-old', { status: 'pending', created_at: old }],
      ['no-time', { status: 'completed', created_at: null }],
      ['time-as-text', { status: 'completed', created_at: String(old) }],
      ['fraction', { status: 'completed', created_at: old + 0.5, expired: true }],
      ['with-files', { status: 'completed', created_at: old, expired: false, image_file: 'withfileswithfileswith.png' }],
      ['twice-keyed', { status: 'completed', created_at: old, expired: true }],
      ['unicode-é', { status: 'completed', created_at: old, expired: true, page_title: 'Ünïcödé \u2028 «»' }],
    ];
    const text = lines.map(([id, fields]) => JSON.stringify({ _id: id, ...fields })).join('\n').replace('"_id":"twice-keyed","status":"completed"', '"_id":"twice-keyed","status":"completed","status":"pending"');
    await fs.writeFile(path.join(dir, 'jobs.db'), `${text}\n`);
    const expected = text
      .split('\n')
      .map((line) => JSON.parse(line) as { _id: string; status: string; created_at: unknown })
      .filter((doc) => !(typeof doc.created_at === 'number' && doc.created_at < NOW - 90 * DAY && ['completed', 'failed'].includes(doc.status)))
      .map((doc) => doc._id)
      .sort();
    expect(expected).toEqual(['nested-after', 'nested-recent', 'no-time', 'pending-nested-ended', 'pending-old', 'time-as-text', 'twice-keyed']);

    const prepared = await prepareJobsFile(path.join(dir, 'jobs.db'), NOW - 90 * DAY, silentLogger);
    expect(prepared.parsed!.docs.map((d) => d._id).sort()).toEqual(expected);
    expect(prepared.dropped).toBe(lines.length - expected.length);
    expect(prepared.withFiles).toEqual([{ jobId: 'with-files', image: 'withfileswithfileswith.png' }]);
    // Only read: the file is as it was.
    expect(await fs.readFile(path.join(dir, 'jobs.db'), 'utf8')).toBe(`${text}\n`);
  });

  it('hands the loader the last line of each job, folds the file to those lines, and leaves a file with nothing to fold untouched', async () => {
    const dir = await tempDir('sa-prefilter-');
    dirs.push(dir);
    const first = await openNedbStores(dir, silentLogger);
    await first.jobs.insert([job({ _id: 'a', status: 'pending', created_at: NOW - DAY, url: 'one' })]);
    await first.jobs.update('a', { status: 'completed', page_title: 'done' });
    await first.jobs.insert([job({ _id: 'b', status: 'pending', created_at: NOW - DAY })]);
    await first.jobs.remove(['b']);
    // A date as NeDB writes one, read back as a Date.
    await fs.appendFile(path.join(dir, 'jobs.db'), `${JSON.stringify({ _id: 'c', status: 'failed', created_at: NOW, at: { $$date: NOW } })}\n`);

    const stores = await openNedbStores(dir, silentLogger, { historyCutoff: cutoffAt(90) });
    expect(await stores.jobs.get('a')).toMatchObject({ status: 'completed', page_title: 'done', url: 'one' });
    expect(await stores.jobs.get('b')).toBeNull();
    expect(((await stores.jobs.get('c')) as unknown as { at: unknown }).at).toEqual(new Date(NOW));
    // The start loads the last lines without writing the file; the sweep's drop folds it.
    expect(stores.leftOut?.pending()).toBe(0);
    expect(await stores.leftOut?.drop()).toBe(0);
    const lines = (await fs.readFile(path.join(dir, 'jobs.db'), 'utf8')).split('\n').filter(Boolean);
    const docs = lines.map((line) => JSON.parse(line) as { _id?: string; $$indexCreated?: { fieldName: string } });
    expect(docs.filter((d) => d._id).map((d) => d._id).sort()).toEqual(['a', 'c']);
    // Each index once; the ones the job store no longer keeps are gone.
    const fields = docs.flatMap((d) => (d.$$indexCreated ? [d.$$indexCreated.fieldName] : []));
    expect(new Set(fields).size).toBe(fields.length);
    expect(fields).toContain('created_at');
    expect(fields).not.toContain('account_id');

    // Opened again, the file is one line per document and index already: it is neither replaced nor rewritten.
    const before = await fs.stat(path.join(dir, 'jobs.db'));
    const again = await openNedbStores(dir, silentLogger, { historyCutoff: cutoffAt(90) });
    expect(await ids(again)).toEqual(['a', 'c']);
    const after = await fs.stat(path.join(dir, 'jobs.db'));
    expect([after.ino, after.mtimeMs, after.size]).toEqual([before.ino, before.mtimeMs, before.size]);
  });

  it('removes the indexes earlier versions kept from a file that defines them', async () => {
    const dir = await tempDir('sa-prefilter-');
    dirs.push(dir);
    const definition = (fieldName: string) => JSON.stringify({ $$indexCreated: { fieldName, unique: false, sparse: false } });
    await fs.writeFile(path.join(dir, 'jobs.db'), [definition('account_id'), definition('completed_at'), JSON.stringify({ _id: 'a', account_id: 'x', status: 'completed', created_at: NOW })].join('\n') + '\n');
    const stores = await openNedbStores(dir, silentLogger, { historyCutoff: cutoffAt(90) });
    expect(await stores.jobs.count({ account_id: 'x' })).toBe(1);
    await (await openNedbStores(dir, silentLogger, { historyCutoff: cutoffAt(90) })).leftOut?.drop();
    const text = await fs.readFile(path.join(dir, 'jobs.db'), 'utf8');
    expect(text).not.toMatch(/account_id","unique|completed_at","unique|indexRemoved/);
  });

  it('on a full disk loads the jobs it keeps, removes the files of those left out, and leaves the file as it was', async (ctx) => {
    const disk = await mountTmpfs('1m', 'sa-prefilter-');
    if (typeof disk === 'string') return ctx.skip();
    try {
      const dir = path.join(disk.dir, 'data');
      await fs.mkdir(dir);
      // Old jobs first, so the new file is begun at once; then enough kept ones to need more room than is left.
      const lines = [
        ...Array.from({ length: 50 }, (_, i) => ({ _id: `old${i}`, status: 'completed', created_at: NOW - 200 * DAY, expired: i > 0, image_file: `old${i}.png` })),
        ...Array.from({ length: 400 }, (_, i) => ({ _id: `new${i}`, status: 'completed', created_at: NOW - DAY, url: 'x'.repeat(1000) })),
      ];
      await fs.writeFile(path.join(dir, 'jobs.db'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      await fs.mkdir(path.join(dir, 'files'));
      await fs.writeFile(path.join(dir, 'files', 'old0.png'), 'png');
      const before = await fs.readFile(path.join(dir, 'jobs.db'), 'utf8');
      await disk.fill();

      const stores = await openNedbStores(dir, silentLogger, { historyCutoff: cutoffAt(90) });
      expect(await stores.jobs.count()).toBe(400);
      // The fold cannot be written: the lines stay for the next start to leave out again.
      await expect(stores.leftOut!.drop().catch(answered)).rejects.toMatchObject({ status: 507 });
      await expect(fs.access(path.join(dir, 'files', 'old0.png'))).rejects.toThrow();
      // As it was, but for the index definitions the store appends where the last page has room.
      expect((await fs.readFile(path.join(dir, 'jobs.db'), 'utf8')).startsWith(before)).toBe(true);
      expect((await fs.readdir(dir)).filter((f) => f.includes('~'))).toEqual([]);
    } finally {
      await disk.unmount();
    }
  });
});


/** A completed job as the service stores one, `ageDays` old. */
function completedJob(id: string, accountId: string, keyId: string, ageDays: number, image: string): JobRecord {
  const created = Date.now() - ageDays * DAY;
  return job({
    _id: id,
    account_id: accountId,
    key_id: keyId,
    batch_id: `batch_${id}`,
    url: 'https://example.com/',
    device: 'desktop',
    preset: 'desktop',
    full_page: false,
    googlebot: false,
    viewport: null,
    format: 'png',
    quality: null,
    callback_url: null,
    base_url: 'http://127.0.0.1',
    status: 'completed',
    progress: 100,
    created_at: created,
    started_at: created + 5,
    completed_at: created + 900,
    error: null,
    image_file: image,
    has_page_source: true,
    truncated: false,
    blocked_requests: 0,
    attempts: 1,
    duration_ms: 895,
    expired: false,
  } as Partial<JobRecord>);
}

describe('a start with history past the period to drop', () => {
  it('listens and serves the jobs it keeps before the history past the period is dropped; the dropped jobs\' files go with the sweep', async () => {
    const dataDir = await tempDir('sa-prefilter-');
    const filesDir = await tempDir('sa-prefilter-files-');
    dirs.push(dataDir, filesDir);
    // The sweep is held back, so what the start did alone can be seen.
    const held = { firstSweepAfterMs: 3_600_000 };
    const first = await startTestServer({ dataDir, filesDir }, held);
    const { accountId, key, keyId } = await first.account();
    const { files } = first.srv.services;
    const keptImage = 'keptimagekeptimagekeptim.png';
    const oldImage = 'oldimageoldimageoldimage.png';
    // A year ago, with its files still on disk (as after a restore, or a retention period longer than the history's).
    await first.srv.services.stores.jobs.insert([completedJob('job_kept', accountId, keyId, 3, keptImage), completedJob('job_old', accountId, keyId, 400, oldImage)]);
    for (const [id, image] of [['job_kept', keptImage], ['job_old', oldImage]]) {
      await files.writeImage(image, Buffer.from('png'));
      await files.writeSource(id, '<html></html>');
    }
    await first.srv.close();

    const server = await startTestServer({ dataDir, filesDir }, held);
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const kept = await server.v1('GET', '/screenshot/job_kept', key);
      expect(kept.status).toBe(200);
      expect(await kept.json()).toMatchObject({ job_id: 'job_kept', status: 'completed' });
      expect((await fetch(`${server.url}/v1/files/${keptImage}`)).status).toBe(200);
      expect((await server.v1('GET', '/screenshot/job_old', key)).status).toBe(404);
      // Listening, and the old job is still to be removed from disk: its files and its line are there.
      await fs.access(path.join(filesDir, 'files', oldImage));
      expect(await fs.readFile(path.join(dataDir, 'jobs.db'), 'utf8')).toContain('job_old');
      const { stores } = server.srv.services;
      expect(stores.leftOut?.pending()).toBe(1);

      await server.srv.services.retention.sweep();
      expect(stores.leftOut?.pending()).toBe(0);
      await expect(fs.access(path.join(filesDir, 'files', oldImage))).rejects.toThrow();
      expect(await files.readSource('job_old')).toBeNull();
      expect(await fs.readFile(path.join(dataDir, 'jobs.db'), 'utf8')).not.toContain('job_old');
      await fs.access(path.join(filesDir, 'files', keptImage));
      expect(await files.readSource('job_kept')).not.toBeNull();
    } finally {
      await server.close();
    }
  });

  it('keeps the lines of the jobs left out through a stop before the sweep, so their files still go at a later start', async () => {
    const dataDir = await tempDir('sa-prefilter-');
    dirs.push(dataDir);
    const image = 'oldimageoldimageoldimage.png';
    const stores = await openNedbStores(dataDir, silentLogger);
    const files = new FileStore(dataDir);
    await files.init();
    await stores.jobs.insert([job({ _id: 'old', status: 'completed', created_at: NOW - 400 * DAY, image_file: image, expired: false })]);
    await files.writeImage(image, Buffer.from('png'));

    const started = await openNedbStores(dataDir, silentLogger, { historyCutoff: cutoffAt(90), files });
    expect(await started.jobs.get('old')).toBeNull();
    // A stop folds the stores, but not jobs.db while a job left out of it has files on disk.
    await started.compact();
    expect(await fs.readFile(path.join(dataDir, 'jobs.db'), 'utf8')).toContain('"old"');

    const later = await openNedbStores(dataDir, silentLogger, { historyCutoff: cutoffAt(90), files });
    expect(later.leftOut?.pending()).toBe(1);
    expect(await later.leftOut?.drop()).toBe(1);
    await expect(fs.access(path.join(dataDir, 'files', image))).rejects.toThrow();
    expect(await fs.readFile(path.join(dataDir, 'jobs.db'), 'utf8')).not.toContain('"old"');
  });
});
