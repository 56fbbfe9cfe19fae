import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let key: string;

beforeAll(async () => {
  // Each spelling is asked of three endpoints at once, past the default 10 a second.
  server = await startTestServer({ ratePerSecond: 1000 });
  ({ key } = await server.account());
});
afterAll(async () => {
  await server?.close();
});

// Nothing listens on port 1: a job made here fails at once instead of loading a page.
const url = 'http://127.0.0.1:1/';
const ACCEPTED: Array<[string, string]> = [
  ['UTC', 'UTC'],
  ['utc', 'UTC'],
  ['GMT', 'UTC'],
  ['Europe/Paris', 'Europe/Paris'],
  ['europe/paris', 'Europe/Paris'],
  ['AMERICA/NEW_YORK', 'America/New_York'],
  ['Etc/GMT+1', 'Etc/GMT+1'],
];
const REFUSED = ['EST', 'CET', 'Mars/Olympus', '+01:00', 'Europe/Paris '];

const screenshot = (timezone: string) => server.v1('POST', '/screenshot', key, { url, timezone });
const monitor = (timezone: string) =>
  server.v1('POST', '/monitors', key, { url, paused: true, schedule: { cron: '0 9 * * *', timezone } });
const monitorCapture = (timezone: string) =>
  server.v1('POST', '/monitors', key, { url, timezone, paused: true, schedule: { every_minutes: 60 } });

describe('one time-zone rule for screenshots and monitors', () => {
  it.each(ACCEPTED)('takes %s in POST /v1/screenshot, POST /v1/monitors and a monitor schedule', async (spelling) => {
    expect((await screenshot(spelling)).status).toBe(201);
    expect((await monitor(spelling)).status).toBe(201);
    expect((await monitorCapture(spelling)).status).toBe(201);
  });

  it.each(REFUSED)('refuses %j in all three with the same words', async (spelling) => {
    const answers = await Promise.all([screenshot(spelling), monitor(spelling), monitorCapture(spelling)]);
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400]);
    const messages = await Promise.all(answers.map(async (a) => ((await a.json()) as { message: string }).message));
    for (const message of messages) expect(message).toContain(`must be an IANA time zone such as Europe/Paris; ${spelling} is not one`);
  });

  it.each(ACCEPTED)('passes %s on to the capture as %s', async (spelling, canonical) => {
    const created = (await (await screenshot(spelling)).json()) as { job_id: string };
    const job = await server.admin('GET', `/jobs/${created.job_id}`);
    expect(job.body.options.timezone).toBe(canonical);
  });
});
