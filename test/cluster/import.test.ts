import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MIGRATIONS } from '../../server/store/pg/migrations.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { clearOfMidnight } from '../helpers/clear-of-midnight.js';
import { runCli, serve } from '../helpers/cli-process.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startTestServer, tempDir, waitForJob } from '../helpers/test-server.js';
import { NO_PROPOSED_MASKS } from '../monitors/no-proposed-masks.js';

// Moving from one machine to a cluster: a NeDB data directory with real history, imported with
// the CLI, served by a node on PostgreSQL that reads the old directory's files.

let postgres: TestPostgres;
let fixtures: FixtureServer;
const dirs: string[] = [];

// The imported usage must still be today's when the nodes read it: the whole file runs on one UTC day.
beforeAll(() => clearOfMidnight(2 * 60_000), 2 * 60_000 + 5_000);

beforeAll(async () => {
  postgres = await startPostgres();
  fixtures = await startFixtureServer();
}, 60_000);

afterAll(async () => {
  await fixtures?.close();
  await postgres?.stop();
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
});

describe('migrate and import', () => {
  it('migrate brings a new database up to date once, and says so the second time', async () => {
    const database = await postgres.createDatabase();
    const first = await runCli(['migrate', '--database', database]);
    expect(first).toMatchObject({ code: 0 });
    expect(first.stdout).toContain(`applied schema migration(s) ${MIGRATIONS.map((m) => m.version).join(', ')}`);
    const again = await runCli(['migrate', '--database', database]);
    expect(again.stdout).toMatch(/the schema is up to date/);
    expect((await runCli(['migrate', '--database', 'mysql://nope'])).stderr).toMatch(/postgres:\/\//);
  });

  it('says plainly that the database cannot be reached, without its password', async () => {
    const dataDir = await tempDir('sa-node-');
    dirs.push(dataDir);
    const refused = await runCli(['serve', '--port', '0', '--data', dataDir, '--database', 'postgres://who:secret-word@127.0.0.1:1/screens']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: could not open the PostgreSQL store at 127\.0\.0\.1:1\/screens: .*ECONNREFUSED/m);
    expect(refused.stderr).not.toContain('secret-word');
    expect(refused.stderr).not.toMatch(/\n\s+at /);
  });

  it('copies accounts, keys, jobs, usage, settings, storage destinations and the admin token; the key, the job and its image keep working', async () => {
    const old = await startTestServer();
    dirs.push(old.dataDir);
    const { key, accountId } = await old.account();
    const destination = { endpoint: 'https://s3.example.test', bucket: 'imported-bucket', access_key_id: 'AKIAIMPORTED00000042', secret_access_key: 'imported-secret' };
    const storage = (await old.admin('PUT', `/accounts/${accountId}/storage`, destination)).body;
    const created = await (await old.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` })).json();
    const before = await waitForJob(old, key, created.job_id);
    expect(before.status).toBe('completed');
    expect((await old.admin('PUT', '/settings', { retention_days: 12 })).status).toBe(200);
    const monitor = await (await old.v1('POST', '/monitors', key, { url: `${fixtures.url}/small.html`, schedule: { every_minutes: 600 }, name: 'kept', ...NO_PROPOSED_MASKS })).json();
    const token = old.srv.adminToken;
    await old.srv.close();

    const database = await postgres.createDatabase();
    const imported = await runCli(['import', '--from', old.dataDir, '--database', database]);
    expect(imported.stderr).toBe('');
    expect(imported.stdout).toMatch(/imported 1 accounts, 1 keys, 1 jobs, 1 usage days, 0 webhook deliveries, 1 monitors, 0 monitor checks/);
    // Run twice, it adds nothing.
    expect((await runCli(['import', '--from', old.dataDir, '--database', database])).code).toBe(0);

    const dataDir = await tempDir('sa-node-');
    dirs.push(dataDir);
    const node = await serve(['--data', dataDir, '--database', database, '--files', old.dataDir]);
    try {
      expect((await fs.readFile(path.join(dataDir, 'admin-token'), 'utf8')).trim()).toBe(token);
      const job = await (await fetch(`${node.url}/v1/screenshot/${created.job_id}`, { headers: { 'x-api-key': key } })).json();
      expect(job).toMatchObject({ job_id: created.job_id, status: 'completed' });
      const image = await fetch(`${node.url}${new URL(before.screenshot_url).pathname}`);
      expect(image.status).toBe(200);
      expect(Buffer.from(await image.arrayBuffer())).toEqual(await fs.readFile(path.join(old.dataDir, 'files', path.basename(before.screenshot_url))));
      const usage = await (await fetch(`${node.url}/v1/usage`, { headers: { 'x-api-key': key } })).json();
      expect(usage.calls_today).toBe(1);
      const settings = await (await fetch(`${node.url}/admin/api/settings`, { headers: { authorization: `Bearer ${token}` } })).json();
      expect(settings.retention_days).toBe(12);
      const monitors = await (await fetch(`${node.url}/v1/monitors`, { headers: { 'x-api-key': key } })).json();
      expect(monitors.monitors).toMatchObject([{ id: monitor.id, name: 'kept', next_run_at: monitor.next_run_at }]);
      const imported = await fetch(`${node.url}/admin/api/accounts/${accountId}/storage`, { headers: { authorization: `Bearer ${token}` } });
      expect(await imported.json()).toEqual(storage);
    } finally {
      node.child.kill('SIGTERM');
      await node.exited;
    }
  }, 120_000);

  it('refuses a directory that is not a data directory, and one whose server runs', async () => {
    const database = await postgres.createDatabase();
    const empty = await tempDir('sa-empty-');
    dirs.push(empty);
    expect((await runCli(['import', '--from', empty, '--database', database])).stderr).toMatch(/not a data directory/);
    const running = await startTestServer();
    try {
      const refused = await runCli(['import', '--from', running.dataDir, '--database', database]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/in use|locked|pid/i);
    } finally {
      await running.close();
    }
  }, 60_000);
});
