import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { brokenRules } from './answer-rules.js';
import { headerValue, oddString, oddValue } from './arbitraries.js';
import { rawRequest } from './raw-http.js';

let server: TestServer;
let port: number;
let accountId: string;
let keyId: string;

beforeAll(async () => {
  server = await startTestServer({ queueLimit: 100_000 });
  port = Number(new URL(server.url).port);
  ({ accountId, keyId } = await server.account());
  await server.admin('POST', '/queue/pause');
});

afterAll(async () => {
  await server?.close();
});

/** Percent-encodes the UTF-8 bytes of any string (encodeURIComponent throws on lone surrogates). */
const percentEncode = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`)).join('');

const bearer = (): [string, string] => ['Authorization', `Bearer ${server.srv.adminToken}`];

/** A body: mostly an object of known and unknown fields with odd values, sometimes any JSON. */
const adminBody = (fields: string[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...fields), oddString()), oddValue(), { maxKeys: 4 }) },
    { weight: 1, arbitrary: oddValue() },
  );

describe('admin write endpoints with random bodies', () => {
  it('never answer 5xx, and every refusal is {error, message}', async () => {
    const endpoint = fc.constantFrom<[string, () => string, string[]]>(
      ['POST', () => '/admin/api/accounts', ['email', 'email_verified', 'plan', 'daily_limit', 'monthly_limit']],
      ['PATCH', () => `/admin/api/accounts/${accountId}`, ['email', 'email_verified', 'plan', 'daily_limit', 'monthly_limit']],
      ['POST', () => `/admin/api/accounts/${accountId}/keys`, ['name', 'ip_whitelist']],
      ['PATCH', () => `/admin/api/keys/${keyId}`, ['name', 'ip_whitelist']],
      ['PUT', () => '/admin/api/settings', ['retention_days', 'egress_allow', 'egress_deny_lan', 'public_base_url', 'full_page_max_height', 'navigation_timeout_ms']],
      ['POST', () => '/admin/api/session', ['token']],
    );
    await fc.assert(
      fc.asyncProperty(
        endpoint.chain(([verb, path, fields]) => fc.tuple(fc.constant(verb), fc.constant(path), adminBody(fields))),
        async ([verb, path, body]) => {
          const answer = await rawRequest(port, {
            method: verb,
            path: path(),
            headers: [bearer(), ['Content-Type', 'application/json']],
            body: JSON.stringify(body),
          });
          expect(brokenRules(answer, verb), `${verb} ${path()} ${JSON.stringify(body).slice(0, 200)}`).toEqual([]);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('admin read endpoints with odd queries and odd credentials', () => {
  it('never answer 5xx, and refuse every credential that is not the token', async () => {
    const query = fc
      .array(fc.tuple(fc.constantFrom('status', 'account_id', 'limit', 'before', 'days', 'job_id'), oddString({ huge: false })), { maxLength: 4 })
      .map((pairs) => pairs.map(([k, v]) => `${k}=${percentEncode(v)}`).join('&'));
    const credential = fc.oneof(
      { weight: 3, arbitrary: fc.constant<[string, string] | null>(null) },
      { weight: 2, arbitrary: headerValue().map((v): [string, string] | null => ['Authorization', v]) },
      { weight: 2, arbitrary: headerValue().map((v): [string, string] | null => ['Authorization', `Bearer ${v}`]) },
      { weight: 2, arbitrary: headerValue().map((v): [string, string] | null => ['Cookie', `sa_admin=${v}`]) },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/admin/api/jobs', '/admin/api/usage', '/admin/api/accounts', `/admin/api/jobs/x/source`, '/admin/api/status', '/admin/api/openapi.json'),
        query,
        fc.boolean(),
        credential,
        async (path, q, withToken, odd) => {
          const headers: Array<[string, string]> = [];
          if (withToken) headers.push(bearer());
          else if (odd) headers.push(odd);
          const answer = await rawRequest(port, { method: 'GET', path: `${path}?${q}`, headers });
          expect(brokenRules(answer, 'GET'), `${path}?${q}`).toEqual([]);
          if (!withToken) expect(answer.status).toBe(401);
        },
      ),
      { numRuns: 300 },
    );
  });
});
