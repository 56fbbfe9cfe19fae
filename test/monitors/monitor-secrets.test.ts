import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SecretBox } from '../../server/crypto/secret-box.js';
import { filesUnder } from '../helpers/files-under.js';
import { forFile } from '../helpers/for-file.js';
import { movableClock } from '../helpers/movable-clock.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';
import { startChangingPage } from './changing-page.js';
import { NO_PROPOSED_MASKS } from './no-proposed-masks.js';
import { restoredMonitor } from './restored-monitor.js';

// A monitor's secret capture fields (html, cookies, credentials) on a real server and its data directory.

const MINUTE = 60_000;
const POLL_MS = 50;
const every = { every_minutes: 600 };

const page = forFile(startChangingPage, (p) => p.close());

/** Whether any file under `dir` holds `secret` in clear, or a value sealed under the directory's key that opens to it. */
async function holds(dir: string, secret: string): Promise<string | null> {
  const box = SecretBox.forDataDir(dir);
  for (const file of await filesUnder(dir)) {
    const text = (await fs.readFile(file)).toString('latin1');
    if (text.includes(secret)) return `${path.relative(dir, file)} (in clear)`;
    // Split rather than matched: a sealed 5 MB document is one token too long for a backtracking pattern.
    for (const sealed of text.split(/[^A-Za-z0-9_.-]+/).filter((token) => token.startsWith('v1.') && token.length > 32)) {
      try {
        if (JSON.stringify(box.open(sealed)).includes(secret)) return path.relative(dir, file);
      } catch {
        // sealed under another key, or not a sealed value
      }
    }
  }
  return null;
}

describe("a monitor's secret fields in the data directory", () => {
  let server: TestServer;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer({ ratePerSecond: 1000 });
    ({ key } = await server.account());
  });
  afterAll(async () => {
    await server?.close();
  });

  it('20 PATCHes of a name grow monitors.db by under 64 KB, whatever the size of its html (5 MB)', async () => {
    const html = `<!doctype html><p>${'a'.repeat(5 * 1024 * 1024 - 64)}</p>`;
    const created = await server.v1('POST', '/monitors', key, { html, schedule: every, ...NO_PROPOSED_MASKS });
    expect(created.status).toBe(201);
    const { id } = await created.json();
    const monitorsDb = path.join(server.dataDir, 'monitors.db');
    const before = (await fs.stat(monitorsDb)).size;
    for (let i = 0; i < 20; i++) expect((await server.v1('PATCH', `/monitors/${id}`, key, { name: `n${i}` })).status).toBe(200);
    const grown = (await fs.stat(monitorsDb)).size - before;
    // Each line used to carry the sealed html: 20 PATCHes appended 140 MB.
    expect(grown).toBeLessThan(64 * 1024);
    expect(before).toBeLessThan(64 * 1024);
  });

  it('replaced cookies and a password leave nothing in the data directory, and a deleted monitor leaves none of its own', async () => {
    const first = { cookie: 'c00kie-m0nitor-first', password: 'pw-m0nitor-first' };
    const second = { cookie: 'c00kie-m0nitor-second', password: 'pw-m0nitor-second' };
    const secretsOf = (s: typeof first) => ({ cookies: [{ name: 'sid', value: s.cookie }], http_auth: { username: 'reader', password: s.password } });
    const { id } = await (await server.v1('POST', '/monitors', key, { url: page.url, schedule: every, ...secretsOf(first), ...NO_PROPOSED_MASKS })).json();
    expect(await holds(server.dataDir, first.cookie)).not.toBeNull();

    const patched = await server.v1('PATCH', `/monitors/${id}`, key, secretsOf(second));
    expect(patched.status).toBe(200);
    expect((await patched.json()).secret_fields).toEqual(['cookies', 'http_auth']);
    for (const secret of Object.values(first)) expect(await holds(server.dataDir, secret), secret).toBeNull();
    expect(await holds(server.dataDir, second.password)).not.toBeNull();

    expect((await server.v1('DELETE', `/monitors/${id}`, key)).status).toBe(204);
    for (const secret of Object.values(second)) expect(await holds(server.dataDir, secret), secret).toBeNull();
  });
});

describe('a monitor restored from a backup, which holds no secret', () => {
  it('fails its checks saying its secrets are gone, one record for the run of them, until they are given again', async () => {
    const clock = movableClock();
    const cookies = [{ name: 'sid', value: 'c00kie-b4ckup-m0nitor' }];
    const { target, key, monitor } = await restoredMonitor('sa-monitor-backup-', { url: page.url, schedule: { every_minutes: 1 }, cookies, ...NO_PROPOSED_MASKS });
    expect(await holds(target, cookies[0].value)).toBeNull();

    const restored = await startTestServer({ dataDir: target, ratePerSecond: 1000 }, { clock, monitorPollMs: POLL_MS });
    try {
      const checks = async () => (await (await restored.v1('GET', `/monitors/${monitor.id}/checks`, key)).json()).checks;
      const nextRun = async () => (await (await restored.v1('GET', `/monitors/${monitor.id}`, key)).json()).next_run_at;
      for (let occurrence = 1; occurrence <= 3; occurrence++) {
        const due = await nextRun();
        clock.advance(MINUTE);
        await expect.poll(nextRun, { timeout: 10_000 }).not.toBe(due);
      }
      // An occurrence is claimed (next_run_at moves on) before its check is stored.
      await expect.poll(async () => (await checks())[0]?.error).toMatch(/the same for 3 scheduled checks in a row/);
      const [failed, ...others] = await checks();
      expect(others).toEqual([]);
      expect(failed).toMatchObject({ status: 'failed', job_id: null });
      expect(failed.error).toMatch(/^The monitor's cookies are no longer kept \(a data directory restored from a backup holds none\); give them again with PATCH/);
      expect(failed.error).toMatch(/the same for 3 scheduled checks in a row since/);

      const refused = await restored.v1('POST', `/monitors/${monitor.id}/run`, key);
      expect(refused.status).toBe(400);
      expect((await refused.json()).message).toContain('cookies are no longer kept');
      // A change of its capture that does not give them again is refused too: it would capture without them.
      const partial = await restored.v1('PATCH', `/monitors/${monitor.id}`, key, { full_page: true });
      expect(partial.status).toBe(400);
      expect((await partial.json()).message).toContain('give them again with this change');

      expect((await restored.v1('PATCH', `/monitors/${monitor.id}`, key, { cookies })).status).toBe(200);
      const run = await restored.v1('POST', `/monitors/${monitor.id}/run`, key);
      expect(run.status).toBe(201);
      expect((await waitForJob(restored, key, (await run.json()).job_id)).status).toBe('completed');
    } finally {
      await restored.close();
    }
  }, 120_000);
});
