import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Clock } from '../../server/time.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// The default limits: 10 requests a second per account, 20 loads a second per render link.
// The clock stands still while a burst is made, so "within one second" does not depend on how
// fast a loaded machine answers.

let fixtures: FixtureServer;
let server: TestServer;
let frozenAt: number | undefined;
const clock: Clock = { now: () => frozenAt ?? Date.now() };

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({}, { clock });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

function link(keyId: string, secret: string, params: Record<string, string>): string {
  const all = { ...params, key_id: keyId };
  const canonical = Object.entries(all)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .sort()
    .join('&');
  const signature = crypto.createHmac('sha256', secret).update(canonical).digest('hex');
  return `${server.url}/v1/render?${new URLSearchParams({ ...all, signature })}`;
}

async function owner() {
  const account = await server.admin('POST', '/accounts', { email: `b${crypto.randomUUID()}@example.test`, email_verified: true });
  const key = await server.admin('POST', `/accounts/${account.body.id}/keys`, { name: 'embed' });
  return { key: key.body.key as string, keyId: key.body.id as string, secret: key.body.signing_secret as string };
}

describe('the render-link budget', () => {
  it("leaves the owner's API open while an embedded link is loaded 30 times in a second", async () => {
    const o = await owner();
    const embedded = link(o.keyId, o.secret, { url: `${fixtures.url}/small.html?embedded` });
    expect((await fetch(embedded)).status).toBe(200);

    // A second and a half on, past the first load's window.
    frozenAt = Date.now() + 1500;
    try {
      const loads = [];
      for (let i = 0; i < 30; i++) loads.push(await fetch(embedded));
      const statuses = loads.map((r) => r.status);
      // The link's own budget: 20 a second.
      expect(statuses.filter((s) => s === 200)).toHaveLength(20);
      expect(statuses.slice(20)).toEqual(Array(10).fill(429));
      expect(loads.slice(0, 20).every((r) => r.headers.get('x-cache') === 'hit')).toBe(true);
      const refused = await loads[20].json();
      expect(refused).toMatchObject({ error: 'Rate limit exceeded', message: expect.stringMatching(/render link.*20 per second per link/) });

      // The account's 10 a second are untouched: its own requests and its other links go on.
      const own = await server.v1('POST', '/screenshot', o.key, { url: `${fixtures.url}/small.html?own` });
      expect(own.status).toBe(201);
      for (let i = 0; i < 8; i++) expect((await server.v1('GET', '/usage', o.key)).status).toBe(200);
      // Another link of the same picture (its own render_timeout): its own budget, served from the cache.
      const other = await fetch(link(o.keyId, o.secret, { url: `${fixtures.url}/small.html?embedded`, render_timeout: '30' }));
      expect(other.status).toBe(200);
      expect(other.headers.get('x-cache')).toBe('hit');
      // The same link with its signature in capitals is the same link, with the same spent budget.
      const upper = embedded.replace(/signature=([0-9a-f]+)/, (_, sig: string) => `signature=${sig.toUpperCase()}`);
      expect((await fetch(upper)).status).toBe(429);
    } finally {
      frozenAt = undefined;
    }
  });
});
