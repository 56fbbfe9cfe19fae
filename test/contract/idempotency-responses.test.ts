import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { requestFingerprint } from '../../server/jobs/idempotent-requests.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { ContractChecker, observe } from './openapi-checker.js';

// The answers an Idempotency-Key brings to POST /v1/screenshot, against the served document.

let server: TestServer;
let checker: ContractChecker;
let key: string;
let accountId: string;

beforeAll(async () => {
  server = await startTestServer({ ratePerSecond: 1000 });
  ({ key, accountId } = await server.account());
  checker = new ContractChecker(await (await fetch(`${server.url}/v1/openapi.json`)).json(), '/v1');
});
afterAll(async () => {
  await server?.close();
});

const BODY = { url: 'http://127.0.0.1:9/' };

/** POSTs `body` with `idempotencyKey`, and returns the answer once checked against the document. */
async function post(idempotencyKey: string, body: unknown = BODY) {
  const headers = { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': idempotencyKey };
  const answer = await observe(server.url, 'POST', '/v1/screenshot', { headers, body: JSON.stringify(body) });
  expect(checker.check(answer)).toEqual([]);
  return answer;
}

describe('POST /v1/screenshot with an Idempotency-Key, against the OpenAPI document', () => {
  it('documents the first answer, its replay, another body (422) and a bad key (400)', async () => {
    expect((await post('contract-1')).status).toBe(201);
    const replay = await post('contract-1');
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await post('contract-1', { url: 'http://127.0.0.1:9/other' })).status).toBe(422);
    expect((await post('k'.repeat(256))).status).toBe(400);
  });

  it('documents the answer while the first request is in flight (409)', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const inFlight = server.srv.services.idempotency.once(accountId, 'POST /v1/screenshot', 'contract-2', requestFingerprint(BODY), async () => {
      await held;
      return { answer: { status: 201, body: {} }, keep: false };
    });
    expect((await post('contract-2')).status).toBe(409);
    release();
    await inFlight;
  });
});
