import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rateKey } from '../../server/api/file-routes.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let now = Date.UTC(2026, 10, 23, 12);

beforeAll(async () => {
  // A clock that moves only when told, so the one-second window is the test's, not the machine's.
  // The test's own address is a proxy it trusts, so X-Forwarded-For names the client.
  server = await startTestServer({ fileRatePerSecond: 5, trustProxy: ['127.0.0.1'] }, { clock: { now: () => now } });
});
afterAll(async () => {
  await server?.close();
});

const image = (n: number) => `${String(n).padStart(24, 'A')}.png`;

describe('GET /v1/files/:name', () => {
  it('answers 429 with Retry-After once one address passes its requests per second', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await fetch(`${server.url}/v1/files/${image(i)}`)).status);
    expect(statuses).toEqual([404, 404, 404, 404, 404, 429, 429, 429]);

    const refused = await fetch(`${server.url}/v1/files/${image(9)}`);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ error: 'Rate limit exceeded', retry_after: 1 });

    now += 1000;
    expect((await fetch(`${server.url}/v1/files/${image(10)}`)).status).toBe(404);
  });

  it("counts a monitor's diff pictures with the images, and every address of an IPv6 /64 as one client", async () => {
    now += 1000;
    const from = (address: string) => ({ headers: { 'X-Forwarded-For': address } });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const address = `2001:db8:1:2:${(i + 1).toString(16)}::${i + 1}`;
      const route = i % 2 ? `/v1/files/${image(i)}` : `/v1/files/${image(i)}/diff`;
      statuses.push((await fetch(`${server.url}${route}`, from(address))).status);
    }
    expect(statuses).toEqual([404, 404, 404, 404, 404, 429, 429]);
    // Another /64 is another client.
    expect((await fetch(`${server.url}/v1/files/${image(1)}/diff`, from('2001:db8:1:3::1'))).status).toBe(404);
  });
});

describe('rateKey', () => {
  it('counts an IPv4 address on its own', () => {
    expect(rateKey('192.0.2.7')).toBe('192.0.2.7');
    expect(rateKey('192.0.2.8')).not.toBe(rateKey('192.0.2.7'));
  });

  it('counts every address of one IPv6 /64 together', () => {
    expect(rateKey('2001:db8:1:2:aaaa::1')).toBe(rateKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'));
    expect(rateKey('2001:db8:1:3::1')).not.toBe(rateKey('2001:db8:1:2::1'));
  });
});
