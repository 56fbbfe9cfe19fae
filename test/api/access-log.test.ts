import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { appRouters } from '../../server/app.js';
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
    expect(records).toEqual([expect.objectContaining({ method: 'GET', path: '/v1/files/[name]', status: 404 })]);
    expect(raw).not.toContain('secretImageName123');
  });

  /**
   * The routes whose parameters an access line shows, on purpose: record ids, which open nothing
   * without the API key or the admin token. A new route with a parameter is masked unless it is
   * added here (and to LOGGED_PARAMS), after deciding its parameter is no capability.
   */
  const SHOWN = new Set([
    '/v1/screenshot/:job_id',
    '/admin/api/accounts/:id',
    '/admin/api/accounts/:id/webhook-secret',
    '/admin/api/accounts/:id/keys',
    '/admin/api/keys/:id',
    '/admin/api/keys/:id/signing-secret',
    '/admin/api/keys/:id/render-link',
    '/admin/api/jobs/:id',
    '/admin/api/jobs/:id/source',
    '/admin/api/jobs/:id/markdown',
    '/admin/api/webhooks/:id/redeliver',
    '/admin/api/accounts/:id/storage',
    '/admin/api/monitors/:id',
    '/admin/api/monitors/:id/run',
    '/admin/api/monitors/:id/checks',
    '/admin/api/monitors/:id/proposed-masks/accept',
    '/admin/api/monitors/:id/proposed-masks/reject',
    '/v1/monitors/:id',
    '/v1/monitors/:id/run',
    '/v1/monitors/:id/checks',
    '/v1/monitors/:id/checks/:job_id/pin',
    '/v1/monitors/:id/proposed-masks/accept',
    '/v1/monitors/:id/proposed-masks/reject',
    '/v1/logins/:id',
    '/admin/api/accounts/:id/logins',
    '/admin/api/logins/:id',
    '/v1/batches/:id',
    '/v1/batches/:id/archive',
    '/admin/api/batches/:id/archive',
  ]);

  it('shows no route parameter but a record id, on every route of the service, for every method', async () => {
    const { v1, admin } = appRouters(server.srv.services);
    const routes = [...v1, ...admin].flatMap((router) => router.stack.filter((layer) => layer.methods.length > 0 && layer.paramNames.length > 0));
    const patterns = [...new Set(routes.map((layer) => String(layer.path)))];
    // The enumeration sees the capability routes.
    expect(patterns).toEqual(expect.arrayContaining(['/v1/files/:name', '/v1/files/:name/thumbnail', '/v1/files/:name/diff']));

    let n = 0;
    for (const layer of routes) {
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
        const values = new Map<string, string>();
        const address = String(layer.path).replace(/:(\w+)/g, (_, name: string) => {
          const value = `Cap${name}${String(++n).padStart(4, '0')}x${'Q'.repeat(16)}`;
          values.set(name, value);
          return value;
        });
        const { records, raw } = await accessLines(() => fetch(`${server.url}${address}`, { method }));
        expect(records, `${method} ${layer.path}`).toHaveLength(1);
        for (const [name, value] of values) {
          const shown = raw.includes(value);
          expect(shown, `${method} ${layer.path}: ${name} ${shown ? 'shown' : 'masked'}`).toBe(SHOWN.has(String(layer.path)));
          if (!shown) expect(records[0].path, `${method} ${layer.path}`).toContain(`[${name}]`);
        }
      }
    }
  });

  it("keeps an image's name out of the line however its address is spelled or asked for", async () => {
    const name = 'Zq8iVdT0mWn3pLk5sJx2rA7b.png';
    const spellings = [
      `/v1/files/${name}/thumbnail`,
      `/v1/files/${name}/thumbnail/`,
      `/v1/files/${name}/`,
      `/V1/files/${name}`,
      `/v1//files/${name}`,
      `/v1/files/${name}/thumbnail/x`,
      `/v1/files/${encodeURIComponent(name).replace('Z', '%5A')}`,
      `/v1/files/${name}?x=1`,
    ];
    const { records, raw } = await accessLines(async () => {
      for (const address of spellings) await fetch(`${server.url}${address}`);
      await fetch(`${server.url}/v1/files/${name}`, { method: 'POST' });
      await fetch(`${server.url}/v1/files/${name}/thumbnail`, { method: 'DELETE' });
      // A render link's signature travels in its query.
      await fetch(`${server.url}/v1/render?url=x&key_id=k&signature=${name}`);
    });
    expect(records).toHaveLength(spellings.length + 3);
    expect(raw).not.toContain(name.slice(0, 16));
    expect(records.map((r) => r.path)).toEqual(expect.arrayContaining(['/v1/files/[name]/thumbnail', '/v1/files/[name]']));
  });
});
