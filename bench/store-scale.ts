// The store-scale benchmark: a data directory holding N job records spread over a year, and the
// service started on it. `npm run bench:store -- [--sizes 10000,100000,400000] [--samples N]
// [--retention-days D]`. Measures the first start (spawn to listening, and to a kept job's status
// read answering), which leaves out what is past the history period, then once that is dropped
// from disk the steady-state start, the server's RSS once settled, and the latency of a
// status read, the usage, an image, the admin job list and the admin status; prints a table,
// each figure's ratio largest/smallest N, and the largest N once more without a history period
// (history_days 3650, as before there was one) to show what the period saves. The data directory
// holds what a year of running leaves: jobs.db, the usage per day and the last week's hourly ends
// (stats.db; `--without-stats` leaves it out, as in a data directory from before it was kept,
// whose first start counts the last two days from the jobs). `--retention-days` (default 7) says
// which jobs are still marked as having their files: 365, as after raising the retention period
// or restoring a backup, leaves every job past the history period with files to remove (only the
// last week's images exist on disk; the others' removals find nothing).
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { DEFAULT_CHROMIUM_PATH } from './scenarios.js';
import { spawnServe } from './service-client.js';
import { quantile } from './stats.js';

const DAY = 86_400_000;
/** Images written to disk: the last week's. */
const IMAGE_DAYS = 7;
const HISTORY_DAYS = 90;
/** The smallest valid PNG (1×1), what every kept image holds here. */
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c63f8cf00000301010018dd8db40000000049454e44ae426082', 'hex');

const { values: flags } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,400000' },
    samples: { type: 'string', default: '40' },
    chromium: { type: 'string', default: DEFAULT_CHROMIUM_PATH },
    'without-stats': { type: 'boolean', default: false },
    'retention-days': { type: 'string', default: '7' },
    /** Leaves out the last run, the largest N without a history period. */
    'only-period': { type: 'boolean', default: false },
  },
});
const sizes = flags.sizes!.split(',').map(Number);
const samples = Number(flags.samples);
const retentionDays = Number(flags['retention-days']);

interface Running {
  url: string;
  pid: number;
  /** Spawn to the listening line. */
  startMs: number;
  /** Spawn to the first 200 of `firstRead` (when given). */
  servedMs: number;
  /** CPU time the server process had used when it listened, s. */
  cpuS: number;
  stop(): Promise<void>;
}

async function serve(dataDir: string, env: Record<string, string> = {}, firstRead?: { path: string; headers: Record<string, string> }): Promise<Running> {
  const started = performance.now();
  // A year of history without a history period takes a while to load.
  const { child, url } = await spawnServe(dataDir, { chromiumPath: flags.chromium!, env, timeoutMs: 300_000, args: ['--browsers', '1'] });
  const startMs = performance.now() - started;
  const cpuS = await cpuSeconds(child.pid!);
  let servedMs = startMs;
  if (firstRead) {
    for (;;) {
      const res = await fetch(`${url}${firstRead.path}`, { headers: firstRead.headers });
      await res.arrayBuffer();
      if (res.status === 200) break;
      if (res.status !== 429) throw new Error(`${firstRead.path} answered ${res.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    servedMs = performance.now() - started;
  }
  return {
    url,
    pid: child.pid!,
    startMs,
    servedMs,
    cpuS,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** User and system CPU time the process has used, s (/proc/<pid>/stat, in clock ticks of 1/100 s). */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await fs.readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The process's resident memory now (VmRSS) and at its highest so far (VmHWM), in MiB. */
async function memoryMb(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** The admin token's and the key's files, made once by a real start: every size starts from copies. */
async function seed(): Promise<{ dir: string; accountId: string; key: string }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sa-store-seed-'));
  const running = await serve(dir);
  const token = (await fs.readFile(path.join(dir, 'admin-token'), 'utf8')).trim();
  const admin = async (route: string, body: unknown) => {
    const res = await fetch(`${running.url}/admin/api${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await res.json()) as { id: string; key: string };
  };
  const account = await admin('/accounts', { email: 'year@example.test', email_verified: true, daily_limit: 1_000_000, monthly_limit: 100_000_000 });
  const key = await admin(`/accounts/${account.id}/keys`, { name: 'store bench' });
  await running.stop();
  return { dir, accountId: account.id, key: key.key };
}

/** `n` completed jobs of one account spread evenly over the last 365 days, newest last, with their usage per day and the last week's hourly ends. */
async function writeYear(dir: string, accountId: string, n: number): Promise<{ recentJob: string; recentImage: string }> {
  const now = Date.now();
  const files = path.join(dir, 'files');
  await fs.mkdir(files, { recursive: true });
  const jobs = await fs.open(path.join(dir, 'jobs.db'), 'w', 0o600);
  const perDay = new Map<string, number>();
  const perHour = new Map<number, number>();
  let chunk = '';
  let recentJob = '';
  let recentImage = '';
  for (let i = 0; i < n; i++) {
    const created = now - 365 * DAY + Math.floor(((i + 1) / n) * 365 * DAY) - 60_000;
    const id = `job_${crypto.randomBytes(12).toString('hex')}`;
    const image = `${crypto.randomBytes(18).toString('base64url')}.png`;
    const expired = created < now - retentionDays * DAY;
    const hasImage = created >= now - IMAGE_DAYS * DAY;
    const record = {
      _id: id,
      account_id: accountId,
      key_id: 'k',
      batch_id: id.replace('job_', 'batch_'),
      url: `https://example.com/page/${i}`,
      device: 'desktop',
      preset: 'desktop',
      full_page: false,
      googlebot: false,
      viewport: null,
      format: 'png',
      quality: null,
      callback_url: null,
      base_url: 'http://127.0.0.1:8080',
      status: 'completed',
      progress: 100,
      created_at: created,
      started_at: created + 5,
      completed_at: created + 900,
      error: null,
      image_file: image,
      has_page_source: !expired,
      truncated: false,
      blocked_requests: 0,
      attempts: 1,
      duration_ms: 895,
      expired,
      http_status: 200,
      final_url: `https://example.com/page/${i}`,
      page_title: 'Example Domain',
    };
    chunk += `${JSON.stringify(record)}\n`;
    if (chunk.length > 1 << 20) {
      await jobs.write(chunk);
      chunk = '';
    }
    if (hasImage) {
      await fs.writeFile(path.join(files, image), PNG);
      recentJob = id;
      recentImage = image;
    }
    const day = new Date(created).toISOString().slice(0, 10);
    perDay.set(day, (perDay.get(day) ?? 0) + 1);
    const hour = Math.floor(record.completed_at / 3_600_000) * 3_600_000;
    if (hour >= now - 7 * DAY) perHour.set(hour, (perHour.get(hour) ?? 0) + 1);
  }
  await jobs.write(chunk);
  await jobs.close();
  const usage = [...perDay].map(([day, count]) => JSON.stringify({ _id: crypto.randomBytes(8).toString('hex'), account_id: accountId, day, month: day.slice(0, 7), count }));
  await fs.writeFile(path.join(dir, 'usage.db'), `${usage.join('\n')}\n`, { mode: 0o600 });
  if (!flags['without-stats']) {
    const hours = [...perHour].map(([hour, completed]) => JSON.stringify({ _id: `h${hour}`, hour, completed }));
    await fs.writeFile(path.join(dir, 'stats.db'), `${hours.join('\n')}\n`, { mode: 0o600 });
  }
  return { recentJob, recentImage };
}

/** Waits until jobs.db is down to about the lines of the jobs the history period keeps: what the first start left out is gone from disk. */
async function droppedFromDisk(file: string, keptBytes: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    if ((await fs.stat(file)).size <= keptBytes * 1.2) return performance.now() - started;
    if (performance.now() - started > 900_000) throw new Error(`${file} still holds the jobs past the history period`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** p50 latency of `samples` GETs, spaced to stay under the per-second limit of 10 per account. */
async function p50(url: string, headers: Record<string, string>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    times.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 110));
  }
  return quantile(times, 0.5);
}

interface Row {
  label: string;
  jobs: number;
  dbMb: number;
  /** The first start: spawn to listening, and to a kept job's status answering. */
  firstStartS: number;
  firstServedS: number;
  firstCpuS: number;
  /** After the first start listened, until jobs.db no longer held what it left out. */
  droppedS: number;
  /** The steady-state start (the next one). */
  startS: number;
  cpuS: number;
  rssMb: number;
  peakMb: number;
  status: number;
  usage: number;
  file: number;
  adminJobs: number;
  adminStatus: number;
}

async function measure(base: { dir: string; accountId: string; key: string }, n: number, env: Record<string, string>, label: string): Promise<Row> {
  // The server's retention period is the one the data was written with: nothing is due to expire at start.
  env = { SCREENSHOT_RETENTION_DAYS: String(retentionDays), ...env };
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sa-store-'));
  try {
    for (const file of ['accounts.db', 'keys.db', 'settings.db', 'admin-token', 'job-secrets.key']) {
      await fs.copyFile(path.join(base.dir, file), path.join(dir, file)).catch(() => undefined);
    }
    const { recentJob, recentImage } = await writeYear(dir, base.accountId, n);
    const jobsFile = path.join(dir, 'jobs.db');
    const dbBytes = (await fs.stat(jobsFile)).size;
    const dbMb = dbBytes / 2 ** 20;
    const v1 = { 'x-api-key': base.key };
    const statusRead = { path: `/v1/screenshot/${recentJob}`, headers: v1 };
    const history = Number(env.SCREENSHOT_HISTORY_DAYS ?? HISTORY_DAYS);
    // The first start leaves out what is past the history period; the next one is the steady state.
    const first = await serve(dir, env, statusRead);
    let droppedS = 0;
    try {
      droppedS = (await droppedFromDisk(jobsFile, (dbBytes * Math.min(history, 365)) / 365)) / 1000;
    } finally {
      await first.stop();
    }
    const running = await serve(dir, env, statusRead);
    try {
      // The sweep at start (expiry, the history period, compaction) settles first.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const token = (await fs.readFile(path.join(dir, 'admin-token'), 'utf8')).trim();
      const admin = { authorization: `Bearer ${token}` };
      const row: Row = {
        label,
        jobs: n,
        dbMb,
        firstStartS: first.startMs / 1000,
        firstServedS: first.servedMs / 1000,
        firstCpuS: first.cpuS,
        droppedS,
        startS: running.startMs / 1000,
        cpuS: running.cpuS,
        rssMb: (await memoryMb(running.pid)).rss,
        peakMb: 0,
        status: await p50(`${running.url}/v1/screenshot/${recentJob}`, v1),
        usage: await p50(`${running.url}/v1/usage`, v1),
        file: await p50(`${running.url}/v1/files/${recentImage}`, {}),
        adminJobs: await p50(`${running.url}/admin/api/jobs?limit=50`, admin),
        adminStatus: await p50(`${running.url}/admin/api/status`, admin),
      };
      const after = await memoryMb(running.pid);
      row.rssMb = Math.max(row.rssMb, after.rss);
      row.peakMb = after.peak;
      return row;
    } finally {
      await running.stop();
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

const load = () => os.loadavg().map((n) => n.toFixed(2)).join(' ');

async function main(): Promise<void> {
  const loadBefore = load();
  const base = await seed();
  const rows: Row[] = [];
  try {
    for (const n of sizes) {
      rows.push(await measure(base, n, {}, 'history 90 days'));
      console.error(`measured ${n} jobs`);
    }
    if (!flags['only-period']) rows.push(await measure(base, sizes[sizes.length - 1], { SCREENSHOT_HISTORY_DAYS: '3650' }, 'no history period'));
  } finally {
    await fs.rm(base.dir, { recursive: true, force: true });
  }
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`);
  console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${load()} after; retention ${retentionDays} days${flags['without-stats'] ? '; without stats.db' : ''}`);
  console.log('| jobs stored | | jobs.db | first start: listening (CPU) | first start: kept job served | left out, gone from disk after | steady start-up (CPU) | server RSS | peak RSS | status read p50 | usage p50 | image p50 | admin job list p50 | admin status p50 |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.jobs.toLocaleString('en')} | ${r.label} | ${fmt(r.dbMb, 0)} MB | ${fmt(r.firstStartS)} s (${fmt(r.firstCpuS)} s) | ${fmt(r.firstServedS)} s | ${fmt(r.droppedS)} s | ${fmt(r.startS)} s (${fmt(r.cpuS)} s) | ${fmt(r.rssMb, 0)} MB | ${fmt(r.peakMb, 0)} MB | ${fmt(r.status)} ms | ${fmt(r.usage)} ms | ${fmt(r.file)} ms | ${fmt(r.adminJobs)} ms | ${fmt(r.adminStatus)} ms |`,
    );
  }
  const small = rows[0];
  const large = rows[sizes.length - 1];
  const keys = ['firstStartS', 'startS', 'rssMb', 'status', 'usage', 'file', 'adminJobs', 'adminStatus'] as const;
  if (large !== small) console.log(`ratio ${large.jobs}/${small.jobs} ${keys.map((k) => `${k}=${fmt(large[k] / small[k], 2)}`).join(' ')}`);
}

await main();
