import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

// A node whose PostgreSQL goes away keeps running and says so: 503 with Retry-After, never a 500.

let postgres: TestPostgres;
let fixtures: FixtureServer;
let server: TestServer;
let key: string;

beforeAll(async () => {
  postgres = await startPostgres();
  fixtures = await startFixtureServer();
  server = await startTestServer({ databaseUrl: await postgres.createDatabase(), browsers: 1 });
  ({ key } = await server.account());
  const created = await (await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` })).json();
  expect((await waitForJob(server, key, created.job_id)).status).toBe('completed');
  await postgres.stop();
}, 120_000);

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
  await postgres?.stop();
});

describe('a node whose database is gone', () => {
  it('answers API requests 503 Service unavailable with Retry-After', async () => {
    for (const res of [
      await server.v1('GET', '/usage', key),
      await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` }),
    ]) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await res.json()).toEqual({ error: 'Service unavailable', message: 'The database did not answer; try again shortly' });
    }
  });

  it('answers the admin API 503 too, and readiness names the database', async () => {
    expect((await server.admin('GET', '/accounts')).status).toBe(503);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { reasons: string[] };
    expect(body.reasons.some((r) => /^postgres is unreachable: /.test(r))).toBe(true);
  });

  it('stays alive', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
