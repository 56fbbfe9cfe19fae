import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { createPool } from '../../server/store/pg/pg-pool.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startTestServer } from '../helpers/test-server.js';

// A monitor's Slack and Teams URLs in a cluster's database: sealed in its row, as in monitors.db.

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(async () => {
  await postgres?.stop();
});

describe("a monitor's Slack and Teams URLs on PostgreSQL", () => {
  it('are sealed in its row, never in clear, and kept by a change that leaves them out', async () => {
    const databaseUrl = await postgres.createDatabase();
    const server = await startTestServer({ databaseUrl, ratePerSecond: 1000, concurrency: 1, browsers: 1 });
    const pool = createPool(databaseUrl, silentLogger);
    try {
      const { key } = await server.account();
      const notify = { slack_url: 'http://127.0.0.1:9/services/T03/B03/slack-row-token', teams_url: 'http://127.0.0.1:9/webhookb2/teams-row-token' };
      const created = await server.v1('POST', '/monitors', key, { url: 'http://127.0.0.1:9/', schedule: { every_minutes: 600 }, paused: true, notify });
      expect(created.status).toBe(201);
      const { id } = await created.json();
      const changed = await (await server.v1('PATCH', `/monitors/${id}`, key, { notify: { email: ['team@example.test'] } })).json();
      expect(changed.notify).toEqual({ email: ['team@example.test'], slack_url: 'http://127.0.0.1:9/…', teams_url: 'http://127.0.0.1:9/…' });

      const { rows } = await pool.query<{ doc: string }>('SELECT doc::text FROM monitors WHERE id = $1', [id]);
      expect(rows[0].doc).not.toContain('row-token');
      expect(JSON.parse(rows[0].doc).notify.sealed_urls).toMatch(/^v1\./);
    } finally {
      await pool.end();
      await server.close();
    }
  }, 60_000);
});
