import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ContractChecker } from '../contract/openapi-checker.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { brokenRules } from './answer-rules.js';
import { contentType, headerValue, method, oddString, requestPath, screenshotBody } from './arbitraries.js';
import { rawRequest } from './raw-http.js';

let server: TestServer;
let port: number;
let key: string;
let accountId: string;
let contract: ContractChecker;
let knownJob: string;

// Headers that frame the message or switch protocols: Node answers those itself, before the app.
const FRAMING = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'expect', 'upgrade', 'te', 'trailer', 'keep-alive']);

const headerName = () =>
  fc
    .string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzXYZ0123456789-!#$%&\'*+.^_`|~'), minLength: 1, maxLength: 20 })
    .filter((name) => !FRAMING.has(name.toLowerCase()));

beforeAll(async () => {
  // Fuzzing sends far more than 10 requests a second; the per-second limit has its own tests.
  server = await startTestServer({ ratePerSecond: 1_000_000, queueLimit: 100_000 });
  port = Number(new URL(server.url).port);
  ({ key, accountId } = await server.account({ daily_limit: 100_000_000, monthly_limit: 100_000_000 }));
  // Jobs from valid requests wait in the queue: this suite is about what gets in, not captures.
  await server.admin('POST', '/queue/pause');
  contract = new ContractChecker(await (await fetch(`${server.url}/v1/openapi.json`)).json(), '/v1');
  const created = await server.v1('POST', '/screenshot', key, { url: 'http://127.0.0.1:1/known' });
  knownJob = (await created.json()).job_id;
});

afterAll(async () => {
  await server?.close();
});

const jobCount = () => server.srv.services.stores.jobs.count({ account_id: accountId });

describe('POST /v1/screenshot with random bodies', () => {
  it('never answers 5xx, renders every refusal as {error, message}, and creates jobs only for accepted requests', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(screenshotBody(), contentType(), async (body, type) => {
        const before = await jobCount();
        const answer = await rawRequest(port, {
          method: 'POST',
          path: '/v1/screenshot',
          headers: [['X-API-Key', key], ...(type === undefined ? [] : [['Content-Type', type] as [string, string]])],
          body: JSON.stringify(body),
        });
        expect(brokenRules(answer, 'POST')).toEqual([]);
        const created = (await jobCount()) - before;
        const schemaAccepts = contract.checkRequestBody('POST', '/screenshot', body).length === 0;
        if (answer.status === 201) {
          accepted++;
          const json = JSON.parse(answer.body.toString());
          expect(created).toBe(json.jobs.length);
          // The implementation may be stricter than the schema (URL parsing), never looser.
          expect(schemaAccepts).toBe(true);
        } else {
          expect(created).toBe(0);
          expect([400, 413]).toContain(answer.status);
        }
      }),
      { numRuns: 400 },
    );
    // The generator must reach the accepting path too, or the job-count check proves nothing.
    expect(accepted).toBeGreaterThan(20);
  });

  it('refuses bytes that are not JSON without creating a job', async () => {
    const before = await jobCount();
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), fc.constantFrom('application/json', 'application/json; charset=utf-8'), async (bytes, type) => {
        const answer = await rawRequest(port, {
          method: 'POST',
          path: '/v1/screenshot',
          headers: [['X-API-Key', key], ['Content-Type', type]],
          body: Buffer.from(bytes),
        });
        expect(brokenRules(answer, 'POST')).toEqual([]);
        expect(answer.status).not.toBe(201);
      }),
      { numRuns: 150 },
    );
    expect(await jobCount()).toBe(before);
  });
});

describe('every v1 endpoint with odd headers', () => {
  it('never answers 5xx and answers 401 to any key that is not a live one', async () => {
    const endpoint = fc.constantFrom<[string, () => string]>(
      ['POST', () => '/v1/screenshot'],
      ['GET', () => `/v1/screenshot/${knownJob}`],
      ['GET', () => `/v1/screenshot/${knownJob}?include_source=1`],
      ['GET', () => '/v1/usage'],
      ['GET', () => '/v1/files/AAAAAAAAAAAAAAAAAAAAAAAA.png'],
      ['GET', () => '/v1/openapi.json'],
    );
    const presentedKey = fc.oneof({ weight: 2, arbitrary: fc.constant(undefined as string | undefined) }, { weight: 2, arbitrary: fc.constant('live') }, { weight: 5, arbitrary: headerValue() });
    const extras = fc.array(fc.tuple(headerName(), headerValue()), { maxLength: 6 });
    const standard = fc.record(
      {
        'X-Forwarded-For': headerValue(),
        Cookie: headerValue(),
        Authorization: headerValue(),
        Accept: headerValue(),
        'Accept-Encoding': headerValue(),
        'Content-Type': contentType().map((t) => t ?? 'application/json'),
        'If-None-Match': headerValue(),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(endpoint, presentedKey, standard, extras, fc.option(oddString()), async ([verb, path], presented, std, extra, url) => {
        const headers: Array<[string, string]> = [...Object.entries(std), ...extra];
        if (presented !== undefined) headers.push(['X-API-Key', presented === 'live' ? key : presented]);
        const body = verb === 'POST' ? JSON.stringify({ url: url ?? 'http://127.0.0.1:1/odd-headers' }) : undefined;
        const answer = await rawRequest(port, { method: verb, path: path(), headers, body });
        expect(brokenRules(answer, verb)).toEqual([]);
        const keyed = !path().startsWith('/v1/files/') && path() !== '/v1/openapi.json';
        if (keyed && presented !== 'live') expect(answer.status).toBe(401);
      }),
      { numRuns: 300 },
    );
  });
});

describe('odd paths and methods anywhere', () => {
  it('never answer 5xx, and every error is {error, message}', async () => {
    const auth = fc.constantFrom<Array<[string, string]>>([], [['X-API-Key', 'live']], [['Authorization', 'admin']]);
    await fc.assert(
      fc.asyncProperty(method(), requestPath(), auth, async (verb, path, credentials) => {
        const headers = credentials.map(([name, value]): [string, string] => [
          name,
          value === 'live' ? key : value === 'admin' ? `Bearer ${server.srv.adminToken}` : value,
        ]);
        if (['POST', 'PUT', 'PATCH'].includes(verb)) headers.push(['Content-Type', 'application/json']);
        const answer = await rawRequest(port, { method: verb, path, headers, body: ['POST', 'PUT', 'PATCH'].includes(verb) ? '{}' : undefined });
        expect(brokenRules(answer, verb), `${verb} ${path}`).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });
});

describe('known odd paths', () => {
  it('answers a malformed percent-escape under /admin/ without a 5xx', async () => {
    for (const path of ['/admin/%', '/admin/%ff', '/admin/%E2%80']) {
      const answer = await rawRequest(port, { method: 'GET', path });
      expect(answer.status, path).toBeLessThan(500);
    }
  });
});
