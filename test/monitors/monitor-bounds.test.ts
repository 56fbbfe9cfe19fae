import fs from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { forFile } from '../helpers/for-file.js';
import { movableClock } from '../helpers/movable-clock.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/test-server.js';
import { startChangingPage } from './changing-page.js';
import { NO_PROPOSED_MASKS } from './no-proposed-masks.js';

// What one account's monitors may take: how many, and the records their checks leave.

const MINUTE = 60_000;
const DAY = 86_400_000;
const POLL_MS = 50;

const page = forFile(startChangingPage, (p) => p.close());

interface Check {
  job_id: string | null;
  at: string;
  status: string;
  error: string | null;
}

const checksOf = async (server: TestServer, key: string, id: string): Promise<Check[]> =>
  (await (await server.v1('GET', `/monitors/${id}/checks`, key)).json()).checks;
const nextRunOf = async (server: TestServer, key: string, id: string): Promise<string> => (await (await server.v1('GET', `/monitors/${id}`, key)).json()).next_run_at;

/** Moves the clock to the monitor's next occurrence and waits until a node has claimed it. */
async function nextOccurrence(server: TestServer, clock: { advance(ms: number): void }, key: string, id: string): Promise<void> {
  const due = await nextRunOf(server, key, id);
  clock.advance(MINUTE);
  await expect.poll(() => nextRunOf(server, key, id), { timeout: 10_000 }).not.toBe(due);
}

describe('monitors per account', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ ratePerSecond: 1000 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("refuses an account's 101st monitor with 400 saying so, and the admin's monitors_per_account moves the bound", async () => {
    const { key } = await server.account();
    const create = (as = key) => server.v1('POST', '/monitors', as, { url: page.url, schedule: { every_minutes: 600 } });
    for (let i = 0; i < 100; i++) expect((await create()).status).toBe(201);
    const refused = await create();
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: 'Bad request',
      message: 'This account has 100 monitors, the most one account may have (monitors_per_account); remove one to create another',
    });
    expect((await create((await server.account()).key)).status).toBe(201);
    try {
      expect((await server.admin('PUT', '/settings', { monitors_per_account: 101 })).status).toBe(200);
      expect((await create()).status).toBe(201);
      expect((await create()).status).toBe(400);
    } finally {
      await server.admin('PUT', '/settings', { monitors_per_account: 100 });
    }
  });
});

describe('the checks of a monitor', () => {
  it('are one record for a run of skipped occurrences, saying how many and since when, and a new one after a check that ran', async () => {
    const clock = movableClock();
    const server = await startTestServer({ ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    try {
      const { key, keyId, accountId } = await server.account();
      const second = (await server.admin('POST', `/accounts/${accountId}/keys`, { name: 'second' })).body.key as string;
      const { id } = await (await server.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 1 }, ...NO_PROPOSED_MASKS })).json();
      expect((await server.admin('PATCH', `/keys/${keyId}`, { revoked: true })).status).toBe(200);
      for (let i = 0; i < 4; i++) await nextOccurrence(server, clock, second, id);
      const [run] = await checksOf(server, second, id);
      expect(await checksOf(server, second, id)).toHaveLength(1);
      expect(run).toMatchObject({ status: 'skipped', job_id: null });
      expect(run.error).toMatch(/revoked.* \(the same for 4 scheduled checks in a row since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/);

      expect((await server.v1('POST', `/monitors/${id}/run`, second)).status).toBe(201);
      await nextOccurrence(server, clock, second, id);
      const [skipped, ran, earlier] = await checksOf(server, second, id);
      expect(skipped).toMatchObject({ status: 'skipped', job_id: null });
      expect(skipped.error).not.toContain('the same for');
      expect(ran.job_id).not.toBeNull();
      expect(earlier).toEqual(run);
    } finally {
      await server.close();
    }
  });

  it('older than the history period are removed with it', async () => {
    const clock = movableClock();
    const dataDir = await tempDir('sa-monitor-history-');
    const first = await startTestServer({ dataDir, ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    const { key } = await first.account();
    const { id } = await (await first.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 600 }, paused: true, ...NO_PROPOSED_MASKS })).json();
    expect((await first.admin('PUT', '/settings', { history_days: 2 })).status).toBe(200);
    const { job_id } = await (await first.v1('POST', `/monitors/${id}/run`, key)).json();
    await expect.poll(async () => (await checksOf(first, key, id)).map((c) => c.status), { timeout: 30_000 }).toEqual(['completed']);
    await first.srv.close();

    clock.advance(3 * DAY);
    const second = await startTestServer({ dataDir, ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    try {
      // The start's sweep removes the check, as the history purge removes its job.
      await expect.poll(() => checksOf(second, key, id), { timeout: 10_000 }).toEqual([]);
      await expect.poll(async () => (await second.v1('GET', `/screenshot/${job_id}`, key)).status, { timeout: 10_000 }).toBe(404);
      const { job_id: recent } = await (await second.v1('POST', `/monitors/${id}/run`, key)).json();
      expect((await checksOf(second, key, id)).map((c) => c.job_id)).toEqual([recent]);
    } finally {
      await second.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
