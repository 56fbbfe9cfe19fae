import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type CapturedLog,captureLog } from '../helpers/capture-log.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let logs: CapturedLog;
let accountId: string;
let key: string;

beforeAll(async () => {
  logs = captureLog();
  server = await startTestServer({}, { log: logs.log });
  ({ accountId, key } = await server.account());
});

afterAll(async () => {
  await server?.close();
});

/** The access lines written while `run` made its requests. */
async function accessLines(run: () => Promise<unknown>) {
  const from = logs.records.length;
  await run();
  const records = logs.records.slice(from);
  return { records: records.filter((r) => r.component === 'http' && 'status' in r), raw: logs.raw.slice(from).join('') };
}

describe('access log', () => {
  it('writes one access line per request without the key or token', async () => {
    const { records, raw } = await accessLines(async () => {
      await server.v1('GET', '/usage', key);
      // Secrets a client put in the query string, as some do.
      await server.v1('GET', `/usage?key=${key}&token=${server.srv.adminToken}`, key);
      const session = await fetch(`${server.url}/admin/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: server.srv.adminToken }),
      });
      const cookie = session.headers.get('set-cookie')!.split(';')[0];
      await fetch(`${server.url}/admin/api/accounts`, { headers: { cookie } });
      await server.admin('GET', '/status');
      await fetch(`${server.url}/healthz`);
    });

    expect(records.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'GET /v1/usage 200',
      'GET /v1/usage 200',
      'POST /admin/api/session 204',
      'GET /admin/api/accounts 200',
      'GET /admin/api/status 200',
      'GET /healthz 200',
    ]);
    for (const record of records) {
      expect(record.level).toBe('info');
      expect(typeof record.time).toBe('string');
      expect(record.duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect(raw).not.toContain(key);
    expect(raw).not.toContain(server.srv.adminToken);
    expect(raw).not.toContain('sa_admin');
    expect(raw).not.toContain('?');
  });

  it("names the account a key identified, and no account where none was", async () => {
    const { records } = await accessLines(async () => {
      await server.v1('GET', '/usage', key);
      await server.v1('GET', '/usage', 'not-a-key');
    });
    expect(records).toEqual([
      expect.objectContaining({ path: '/v1/usage', status: 200, account_id: accountId }),
      expect.objectContaining({ path: '/v1/usage', status: 401 }),
    ]);
    expect(records[1]).not.toHaveProperty('account_id');
  });

  it("keeps an image's name out of the line: the name is what grants access to it", async () => {
    const { records, raw } = await accessLines(() => fetch(`${server.url}/v1/files/secretImageName123.png`));
    expect(records).toEqual([expect.objectContaining({ method: 'GET', path: '/v1/files/[image]', status: 404 })]);
    expect(raw).not.toContain('secretImageName123');
  });
});
