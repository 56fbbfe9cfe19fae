import fs from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { clearOfMidnight } from '../helpers/clear-of-midnight.js';
import { forFile } from '../helpers/for-file.js';
import { movableClock } from '../helpers/movable-clock.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/test-server.js';
import { startChangingPage } from './changing-page.js';
import { NO_PROPOSED_MASKS } from './no-proposed-masks.js';

// Schedules with a clock the test moves: the real time plus an offset, so minutes pass at once.

const MINUTE = 60_000;
const POLL_MS = 50;

const page = forFile(startChangingPage, (p) => p.close());

interface Check {
  job_id: string | null;
  status: string;
  error: string | null;
}

const checksOf = async (server: TestServer, key: string, id: string): Promise<Check[]> =>
  (await (await server.v1('GET', `/monitors/${id}/checks`, key)).json()).checks;

/** Waits until the monitor has `count` checks (and says so if it gets more meanwhile). */
async function untilChecks(server: TestServer, key: string, id: string, count: number): Promise<Check[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const checks = await checksOf(server, key, id);
    if (checks.length >= count) return checks;
    if (Date.now() > deadline) throw new Error(`${checks.length} check(s), not ${count}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

const nextRunOf = async (server: TestServer, key: string, id: string) => Date.parse((await (await server.v1('GET', `/monitors/${id}`, key)).json()).next_run_at);

describe('a schedule across a restart', () => {
  it('runs the occurrence that came, and after a stop the missed ones once, neither lost nor doubled', async () => {
    const clock = movableClock();
    const dataDir = await tempDir('sa-monitor-restart-');
    const first = await startTestServer({ dataDir, ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    const { key } = await first.account();
    const monitor = await (await first.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 1 }, ...NO_PROPOSED_MASKS })).json();
    const due = Date.parse(monitor.next_run_at);
    expect(due - Date.parse(monitor.created_at)).toBe(MINUTE);

    clock.advance(MINUTE + 1000);
    expect(await untilChecks(first, key, monitor.id, 1)).toHaveLength(1);
    // Claimed: the next occurrence is a minute after the one that ran, in the future.
    expect(await nextRunOf(first, key, monitor.id)).toBe(due + MINUTE);
    await first.srv.close();

    // Four occurrences pass while no service runs. The clock also moves with real time, so each
    // step lands one second past an occurrence: the steps below hold while the test's real time
    // stays under 59 s (a capture, a stop and a start), not 29 s as with half a minute.
    clock.advance(4 * MINUTE + 1000);
    const second = await startTestServer({ dataDir, ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    try {
      const after = await untilChecks(second, key, monitor.id, 2);
      const next = await nextRunOf(second, key, monitor.id);
      // The missed ones ran as one check, and the next occurrence keeps the schedule's phase.
      // (the first ran at due, the stop was at due + 1 s, the start at due + 4 min 2 s)
      expect(next).toBe(due + 5 * MINUTE);
      expect(next).toBeGreaterThan(clock.now());
      expect(await checksOf(second, key, monitor.id)).toHaveLength(2);
      expect(after.map((c) => c.status)).not.toContain('skipped');

      clock.advance(MINUTE);
      expect(await untilChecks(second, key, monitor.id, 3)).toHaveLength(3);
      expect(await nextRunOf(second, key, monitor.id)).toBe(due + 6 * MINUTE);
    } finally {
      await second.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('records a skipped check with the reason when the account is over its daily limit', async () => {
    // The clock runs two minutes ahead by the end: both checks must fall on one UTC day.
    await clearOfMidnight(3 * MINUTE);
    const clock = movableClock();
    const server = await startTestServer({ ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    try {
      const { key } = await server.account({ daily_limit: 1 });
      const monitor = await (await server.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 1 }, ...NO_PROPOSED_MASKS })).json();
      clock.advance(MINUTE + 1000);
      await untilChecks(server, key, monitor.id, 1);
      clock.advance(MINUTE);
      const [skipped, ran] = await untilChecks(server, key, monitor.id, 2);
      expect(ran.status).not.toBe('skipped');
      expect(skipped).toMatchObject({ status: 'skipped', job_id: null });
      expect(skipped.error).toMatch(/daily limit/i);
    } finally {
      await server.close();
    }
  }, 3 * MINUTE + 60_000);

  it("skips the scheduled checks of a monitor whose key is revoked, runs one asked for with another key, and pauses one whose account is gone", async () => {
    const clock = movableClock();
    const server = await startTestServer({ ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    try {
      const { key, keyId, accountId } = await server.account();
      const second = await server.admin('POST', `/accounts/${accountId}/keys`, { name: 'second' });
      const monitor = await (await server.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 1 }, ...NO_PROPOSED_MASKS })).json();
      expect((await server.admin('PATCH', `/keys/${keyId}`, { revoked: true })).status).toBe(200);
      clock.advance(MINUTE + 1000);
      const [skipped] = await untilChecks(server, second.body.key, monitor.id, 1);
      expect(skipped).toMatchObject({ status: 'skipped', job_id: null });
      expect(skipped.error).toContain('revoked');
      const run = await server.v1('POST', `/monitors/${monitor.id}/run`, second.body.key);
      expect(run.status).toBe(201);
      const { job_id } = await run.json();
      expect((await server.srv.services.stores.jobs.get(job_id))?.key_id).toBe(second.body.id);
      // The admin's run uses the monitor's own key: refused, saying why.
      const refused = await server.admin('POST', `/monitors/${monitor.id}/run`);
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain('revoked');

      expect((await server.admin('DELETE', `/accounts/${accountId}`)).status).toBe(204);
      clock.advance(MINUTE);
      // Its monitors are no account's any more: the next occurrence pauses the monitor.
      await expect.poll(async () => (await server.srv.services.stores.monitors.get(monitor.id))?.paused, { timeout: 10_000 }).toBe(true);
      expect((await server.srv.services.stores.monitors.get(monitor.id))?.next_run_at).toBeNull();
    } finally {
      await server.close();
    }
  });

  it('does not run a paused monitor, and a resumed one counts from the resume', async () => {
    const clock = movableClock();
    const server = await startTestServer({ ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    try {
      const { key } = await server.account();
      const monitor = await (await server.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 1 }, paused: true, ...NO_PROPOSED_MASKS })).json();
      expect(monitor.next_run_at).toBeNull();
      clock.advance(5 * MINUTE);
      const resumed = await (await server.v1('PATCH', `/monitors/${monitor.id}`, key, { paused: false })).json();
      expect(Date.parse(resumed.next_run_at)).toBeGreaterThan(clock.now());
      expect(await checksOf(server, key, monitor.id)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('diff pictures past the retention period', () => {
  it('are removed from disk, and the check no longer names one', async () => {
    const clock = movableClock();
    const dataDir = await tempDir('sa-monitor-retention-');
    const first = await startTestServer({ dataDir, ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    const { key } = await first.account();
    const monitor = await (await first.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 600 }, mask_selectors: ['#clock'], ...NO_PROPOSED_MASKS })).json();
    const settledCheck = async (server: TestServer, n: number) => {
      const { job_id } = await (await server.v1('POST', `/monitors/${monitor.id}/run`, key)).json();
      for (;;) {
        const checks = await checksOf(server, key, monitor.id);
        if (checks.length >= n && checks.every((c) => c.status !== 'pending')) return checks.find((c) => c.job_id === job_id) as Check & { diff_url: string | null };
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    };
    let diffFile = '';
    let changedJob = '';
    try {
      page.box = '#2060c0';
      await settledCheck(first, 1);
      page.box = '#e0a020';
      const changed = await settledCheck(first, 2);
      expect(changed.diff_url).not.toBeNull();
      changedJob = changed.job_id!;
      diffFile = `${dataDir}/files/${new URL(changed.diff_url!).pathname.split('/')[3].replace(/\.png$/, '')}.diff.png`;
      await fs.access(diffFile);
    } finally {
      await first.srv.close();
      page.box = '#2060c0';
    }
    // Past the retention period (7 days by default): the start's sweep removes the diff picture.
    clock.advance(8 * 86_400_000);
    const second = await startTestServer({ dataDir, ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    try {
      await expect.poll(() => fs.access(diffFile).then(() => 'there', () => 'gone'), { timeout: 10_000 }).toBe('gone');
      // (The start also ran the occurrence missed meanwhile: a new check, with a diff of its own.)
      const checks: Array<{ job_id: string; diff_url: string | null }> = (await (await second.v1('GET', `/monitors/${monitor.id}/checks`, key)).json()).checks;
      expect(checks.find((c) => c.job_id === changedJob)?.diff_url).toBeNull();
    } finally {
      await second.close();
    }
  });
});

describe('a schedule in a cluster', () => {
  let postgres: TestPostgres;
  beforeAll(async () => {
    postgres = await startPostgres();
  });
  afterAll(async () => {
    await postgres?.stop();
  });

  it('runs each occurrence once across two services on one database', async () => {
    const clock = movableClock();
    const databaseUrl = await postgres.createDatabase();
    const filesDir = await tempDir('sa-monitor-files-');
    const node = () => startTestServer({ databaseUrl, filesDir, ratePerSecond: 1000, concurrency: 1, browsers: 1 }, { clock, monitorPollMs: POLL_MS / 2 });
    const a = await node();
    const b = await node();
    try {
      const { key } = await a.account();
      const monitor = await (await a.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 1 }, ...NO_PROPOSED_MASKS })).json();
      for (let occurrence = 1; occurrence <= 3; occurrence++) {
        clock.advance(MINUTE);
        await untilChecks(b, key, monitor.id, occurrence);
        // Both nodes have looked many times over once the next occurrence is stored: a double would show now.
        await new Promise((r) => setTimeout(r, 20 * POLL_MS));
        expect(await checksOf(a, key, monitor.id)).toHaveLength(occurrence);
      }
      const checks = await checksOf(a, key, monitor.id);
      expect(new Set(checks.map((c) => c.job_id)).size).toBe(3);
    } finally {
      await a.close();
      await b.close();
      await fs.rm(filesDir, { recursive: true, force: true });
    }
  });
});
