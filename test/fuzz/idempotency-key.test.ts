import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { brokenRules } from './answer-rules.js';
import { headerValue, validScreenshotBody } from './arbitraries.js';
import { rawRequest } from './raw-http.js';

let server: TestServer;
let port: number;
let key: string;
let accountId: string;

beforeAll(async () => {
  server = await startTestServer({ ratePerSecond: 1_000_000, queueLimit: 100_000 });
  port = Number(new URL(server.url).port);
  ({ key, accountId } = await server.account({ daily_limit: 100_000_000, monthly_limit: 100_000_000 }));
  // This suite is about what gets in, not captures.
  await server.admin('POST', '/queue/pause');
});
afterAll(async () => {
  await server?.close();
});

const jobCount = () => server.srv.services.stores.jobs.count({ account_id: accountId });
const post = (idempotencyKey: string, body: unknown) =>
  rawRequest(port, {
    method: 'POST',
    path: '/v1/screenshot',
    headers: [['X-API-Key', key], ['Content-Type', 'application/json'], ['Idempotency-Key', idempotencyKey]],
    body: JSON.stringify(body),
  });

describe('POST /v1/screenshot with random Idempotency-Keys', () => {
  it('never answers 5xx: a key is taken (201) or refused (400), and jobs are made only when taken', async () => {
    await fc.assert(
      fc.asyncProperty(headerValue(), validScreenshotBody(), async (idempotencyKey, body) => {
        const before = await jobCount();
        const answer = await post(idempotencyKey, body);
        expect(brokenRules(answer, 'POST')).toEqual([]);
        expect([201, 400, 422]).toContain(answer.status);
        const created = (await jobCount()) - before;
        if (answer.status !== 201) expect(created).toBe(0);
        if (answer.status === 400) expect(JSON.parse(answer.body.toString()).message).toMatch(/^Idempotency-Key must be/);
      }),
      { numRuns: 200 },
    );
  });

  it('makes the jobs of each key once, whatever order of retries and other bodies comes', async () => {
    const bodies = [{ url: 'http://127.0.0.1:1/a' }, { url: 'http://127.0.0.1:1/b', devices: ['all'] }, { url: 'http://127.0.0.1:1/c', full_page: true }];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 2 })), { minLength: 1, maxLength: 12 }), fc.uuid(), async (steps, run) => {
        const before = await jobCount();
        /** Per key: the body it was first used with, and the answer it got. */
        const first = new Map<number, { body: number; jobIds: string[] }>();
        for (const [k, b] of steps) {
          const answer = await post(`${run}-${k}`, bodies[b]);
          const seen = first.get(k);
          if (!seen) {
            expect(answer.status).toBe(201);
            first.set(k, { body: b, jobIds: JSON.parse(answer.body.toString()).jobs.map((j: { job_id: string }) => j.job_id) });
          } else if (seen.body === b) {
            expect(answer.status).toBe(201);
            expect(JSON.parse(answer.body.toString()).jobs.map((j: { job_id: string }) => j.job_id)).toEqual(seen.jobIds);
          } else {
            expect(answer.status).toBe(422);
          }
        }
        const made = [...first.values()].reduce((sum, f) => sum + f.jobIds.length, 0);
        expect((await jobCount()) - before).toBe(made);
      }),
      { numRuns: 40 },
    );
  });
});
