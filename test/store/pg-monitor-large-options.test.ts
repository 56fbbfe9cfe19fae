import fs from 'node:fs/promises';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { PgMonitorStore } from '../../server/store/pg/pg-monitor-store.js';
import { createPool } from '../../server/store/pg/pg-pool.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startTestServer, waitForJob } from '../helpers/test-server.js';
import { type ChangingPage, startChangingPage } from '../monitors/changing-page.js';
import { NO_PROPOSED_MASKS } from '../monitors/no-proposed-masks.js';
import { importedMonitorSecrets } from './monitor-import.js';

// A monitor's options too large for its record, in a cluster's database: kept in monitor_secrets with its secrets.

const KB = 1024;
/** 64 KB of CSS painting the watched page's box red, and 64 KB of script doing nothing. */
const styles = `#box{background:#ff0000 !important}/*${'s'.repeat(64 * KB - 64)}*/`;
const scripts = `/*${'j'.repeat(64 * KB - 8)}*/`;

let postgres: TestPostgres;
let page: ChangingPage;
beforeAll(async () => {
  postgres = await startPostgres();
  page = await startChangingPage();
});
afterAll(async () => {
  await page?.close();
  await postgres?.stop();
});

describe('a monitor with 64 KB of styles and of scripts on PostgreSQL', () => {
  it('keeps a record of under 2 KB, shows its options as given, and captures with its styles', async () => {
    const databaseUrl = await postgres.createDatabase();
    const filesDir = await tempDir('sa-pg-monitor-options-');
    const server = await startTestServer({ databaseUrl, filesDir, ratePerSecond: 1000, concurrency: 1, browsers: 1 });
    const pool = createPool(databaseUrl, silentLogger);
    try {
      const { key } = await server.account();
      const created = await server.v1('POST', '/monitors', key, { url: page.url, schedule: { every_minutes: 600 }, styles, scripts, ...NO_PROPOSED_MASKS });
      expect(created.status).toBe(201);
      const { id } = await created.json();
      expect((await server.v1('PATCH', `/monitors/${id}`, key, { name: 'renamed' })).status).toBe(200);

      const { rows } = await pool.query<{ doc: string }>('SELECT doc::text FROM monitors WHERE id = $1', [id]);
      expect(Buffer.byteLength(rows[0].doc)).toBeLessThan(2 * KB);
      expect(JSON.parse(rows[0].doc).sealed_options).toEqual(['styles', 'scripts']);
      expect(await new PgMonitorStore(pool).secrets(id)).toMatch(/^v1\./);

      const shown = await (await server.v1('GET', `/monitors/${id}`, key)).json();
      expect(shown.capture).toMatchObject({ url: page.url, styles, scripts });

      const run = await server.v1('POST', `/monitors/${id}/run`, key);
      expect(run.status).toBe(201);
      const job = await waitForJob(server, key, (await run.json()).job_id);
      expect(job.status).toBe('completed');
      const png = Buffer.from(await (await fetch(job.screenshot_url)).arrayBuffer());
      const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const i = (350 * info.width + 200) * info.channels;
      expect([data[i], data[i + 1], data[i + 2]]).toEqual([255, 0, 0]);
    } finally {
      await pool.end();
      await server.close();
      await fs.rm(filesDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('an import of a data directory copies the sealed options of a monitor without secrets into monitor_secrets', async () => {
    const fields = { _id: 'mon_options', sealed_options: ['styles'] };
    expect(await importedMonitorSecrets(postgres, 'sa-import-monitor-options-', fields, 'v1.sealed-options')).toBe('v1.sealed-options');
  });
});
