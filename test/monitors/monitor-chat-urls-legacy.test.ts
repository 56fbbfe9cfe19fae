// A data directory from the version that kept monitors' Slack and Teams URLs in clear: the start
// seals them, and no line of monitors.db holds one after it.
import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { SecretBox } from '../../server/crypto/secret-box.js';
import type { MonitorRecord } from '../../server/store/records/monitor-record.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { NO_PROPOSED_MASKS } from './no-proposed-masks.js';

const SLACK = 'http://127.0.0.1:9/services/T09/B09/legacy-slack-token';
const TEAMS = 'http://127.0.0.1:9/webhookb2/legacy-teams-token';

let server: TestServer | undefined;
afterAll(async () => {
  await server?.close();
});

describe('monitors whose chat URLs an earlier version kept in clear', () => {
  it('have them sealed at start, shown by origin, and no line of monitors.db holding them', async () => {
    server = await startTestServer();
    const { key } = await server.account();
    const created = await server.v1('POST', '/monitors', key, { url: 'http://127.0.0.1:9/', schedule: { every_minutes: 60 }, paused: true, ...NO_PROPOSED_MASKS });
    expect(created.status).toBe(201);
    const { id } = await created.json();
    // Stopped, its data directory kept (close() would remove it).
    await server.srv.close();

    // As the earlier version wrote the record: the URLs in its notify, nothing sealed.
    const file = path.join(server.dataDir, 'monitors.db');
    const lines = (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as MonitorRecord);
    const legacy = { ...lines.filter((line) => line._id === id).at(-1)!, notify: { email: ['ops@example.test'], slack_url: SLACK, teams_url: TEAMS } };
    await fs.writeFile(file, `${JSON.stringify(legacy)}\n`);

    server = await startTestServer({ dataDir: server.dataDir });
    const after = await fs.readFile(file, 'utf8');
    expect(after).not.toContain('legacy-slack-token');
    expect(after).not.toContain('legacy-teams-token');
    const shown = await (await server.v1('GET', `/monitors/${id}`, key)).json();
    expect(shown.notify).toEqual({ email: ['ops@example.test'], slack_url: 'http://127.0.0.1:9/…', teams_url: 'http://127.0.0.1:9/…' });
    const record = after.split('\n').filter(Boolean).map((line) => JSON.parse(line) as MonitorRecord).filter((line) => line._id === id).at(-1)!;
    expect(SecretBox.forDataDir(server.dataDir).open(record.notify!.sealed_urls!)).toEqual({ slack_url: SLACK, teams_url: TEAMS });
  });
});
