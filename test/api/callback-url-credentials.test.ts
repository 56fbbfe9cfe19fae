import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer({ ratePerSecond: 1000 });
  key = (await server.account()).key;
});
afterAll(async () => {
  await server?.close();
});

/** callback_url spellings that carry a user name, a password or an empty userinfo. */
const WITH_CREDENTIALS = [
  'http://user:password@127.0.0.1:9/hook',
  'https://user@hooks.example.test/hook',
  'http://:password@hooks.example.test/',
  'http://@hooks.example.test/',
  'HTTP://user:pw@hooks.example.test/',
  'http:\\\\user:pw@hooks.example.test\\hook',
  'http:user:pw@hooks.example.test/',
  '  http://us\ter:p\nw@hooks.example.test/',
];

const refusal = async (res: Response) => ({ status: res.status, body: await res.json() });

describe('callback_url with credentials', () => {
  it.each(WITH_CREDENTIALS)('POST /v1/screenshot refuses %j with 400 naming callback_url, and counts no call', async (callback_url) => {
    const answer = await refusal(await server.v1('POST', '/screenshot', key, { url: 'http://127.0.0.1:9/', callback_url }));
    expect(answer).toEqual({
      status: 400,
      body: { error: 'Bad request', message: expect.stringMatching(/^callback_url may not contain a user name or password \(user:password@\); .*webhook-signature/) },
    });
    expect(await (await server.v1('GET', '/usage', key)).json()).toMatchObject({ calls_today: 0 });
  });

  it('refuses it in the same words as url, with the same check', async () => {
    const url = await refusal(await server.v1('POST', '/screenshot', key, { url: 'http://user:pw@127.0.0.1:9/' }));
    const callback = await refusal(await server.v1('POST', '/screenshot', key, { url: 'http://127.0.0.1:9/', callback_url: 'http://user:pw@127.0.0.1:9/' }));
    expect(url.body.message.split(';')[0]).toBe('url may not contain a user name or password (user:password@)');
    expect(callback.body.message.split(';')[0]).toBe('callback_url may not contain a user name or password (user:password@)');
  });

  it('keeps an @ after the host of a callback_url: in its path or query', async () => {
    const res = await server.v1('POST', '/screenshot', key, { url: 'http://127.0.0.1:9/', callback_url: 'http://127.0.0.1:9/hook/@me?to=a@b' });
    expect(res.status).toBe(201);
  });

  it.each(WITH_CREDENTIALS)("POST /v1/monitors refuses a monitor's callback_url %j with 400 naming callback_url", async (callback_url) => {
    const answer = await refusal(await server.v1('POST', '/monitors', key, { url: 'http://127.0.0.1:9/', schedule: { every_minutes: 600 }, callback_url }));
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/^callback_url may not contain a user name or password/);
  });

  it("PATCH /v1/monitors/:id refuses a callback_url with credentials and keeps the monitor's own", async () => {
    const created = await server.v1('POST', '/monitors', key, { url: 'http://127.0.0.1:9/', schedule: { every_minutes: 600 }, paused: true, callback_url: 'http://127.0.0.1:9/hook' });
    const monitor = await created.json();
    const answer = await refusal(await server.v1('PATCH', `/monitors/${monitor.id}`, key, { callback_url: 'http://user:pw@127.0.0.1:9/hook' }));
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/^callback_url may not contain a user name or password/);
    expect(await (await server.v1('GET', `/monitors/${monitor.id}`, key)).json()).toMatchObject({ callback_url: 'http://127.0.0.1:9/hook' });
  });
});
