import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { adminOpenApiDocument } from '../../server/api/openapi/admin-document.js';
import { v1OpenApiDocument } from '../../server/api/openapi/v1-document.js';
import { rawRequest } from '../fuzz/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// Authentication and the admin network rule must be decided on exactly the path that is
// routed. Every documented route is tried in spellings a router or a prefix check could read
// differently: upper, mixed and percent-encoded case, doubled and trailing slashes.

type Operation = { method: string; path: string };

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** Routes open by design; only their other spellings are tried, and must reach nothing. */
const PUBLIC = new Set(['DELETE /admin/api/session', 'GET /v1/openapi.json', 'GET /v1/files/{name}', 'GET /v1/evidence/public-key']);
const spellings = (op: Operation, path: string) => (PUBLIC.has(`${op.method} ${op.path}`) ? variants(path) : [path, ...variants(path)]);

function operations(document: Record<string, unknown>, base: string): Operation[] {
  const paths = document.paths as Record<string, Record<string, unknown>>;
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => METHODS.includes(method))
      .map((method) => ({ method: method.toUpperCase(), path: base + path })),
  );
}

/** Percent-encodes the first letter of every literal segment: `/admin` → `/%61dmin`. */
const encodeFirstLetters = (path: string) =>
  path.replace(/\/([a-z])/g, (_, c: string) => `/%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Spellings of `path` that name the same route to a lenient reader, and never to ours. */
export function variants(path: string): string[] {
  const segments = path.split('/');
  const capitalised = segments.map((s) => (s ? s[0]!.toUpperCase() + s.slice(1) : s)).join('/');
  const out = new Set([
    path.toUpperCase(),
    capitalised,
    // Each literal segment in upper case on its own: the prefix, then the route.
    ...segments.map((_, i) => segments.map((s, j) => (i === j && !/^[A-Za-z0-9_-]{20,}$/.test(s) ? s.toUpperCase() : s)).join('/')),
    encodeFirstLetters(path),
    path.replace(/^\/(admin|v1)/, (m) => `/%${m.charCodeAt(1).toString(16)}${m.slice(2)}`),
    path.replace(/\/api\//, '%2Fapi/'),
    `/${path}`,
    path.replace(/\/api\//, '/api//'),
    path.replace(/^\/v1\//, '/v1//'),
    `${path}/`,
    `${path}//`,
    path.replace(/\/([^/]+)$/, '/./$1'),
  ]);
  out.delete(path);
  return [...out];
}

const isJsonError = (body: Buffer) => {
  const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown; message?: unknown };
  return typeof parsed.error === 'string' && typeof parsed.message === 'string';
};

let server: TestServer;
let port: number;
let ids: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  port = Number(new URL(server.url).port);
  const { accountId, keyId } = await server.account();
  ids = { id: keyId, job_id: 'job_000000000000000000000000', name: 'AAAAAAAAAAAAAAAAAAAAAAAA.png' };
  ids.account = accountId;
});
afterAll(async () => {
  await server?.close();
});

/** The concrete path: account routes get the account's id, key routes the key's. */
function concrete(path: string): string {
  return path
    .replace('/accounts/{id}', `/accounts/${ids.account}`)
    .replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? 'x');
}

/**
 * Sends every operation in each of its spellings without credentials; lists those answered
 * with anything but a JSON 400, 401, 404 or 405.
 */
async function tryEverySpelling(ops: Operation[], body: string): Promise<{ tried: string[]; reached: string[] }> {
  const tried: string[] = [];
  const reached: string[] = [];
  for (const op of ops) {
    for (const spelling of spellings(op, concrete(op.path))) {
      const answer = await rawRequest(port, {
        method: op.method,
        path: spelling,
        headers: [['Content-Type', 'application/json']],
        body: ['POST', 'PUT', 'PATCH'].includes(op.method) ? body : undefined,
      });
      tried.push(`${op.method} ${spelling}`);
      if (![400, 401, 404, 405].includes(answer.status) || !isJsonError(answer.body)) reached.push(`${op.method} ${spelling} → ${answer.status}`);
    }
  }
  return { tried, reached };
}

describe('admin routes spelled another way', () => {
  it('answer 401 or 404 without the token, never 2xx, for every documented route and spelling', async () => {
    const secretBefore = await server.admin('GET', `/accounts/${ids.account}/webhook-secret`);
    const { tried, reached } = await tryEverySpelling(operations(adminOpenApiDocument(server.url), '/admin/api'), '{}');
    expect(reached).toEqual([]);
    expect(tried.length).toBeGreaterThan(200);

    // Nothing changed behind the refusals.
    const key = await server.admin('GET', `/keys/${ids.id}`);
    expect(key.status).toBe(200);
    expect(key.body.revoked).toBe(false);
    expect((await server.admin('GET', `/accounts/${ids.account}`)).status).toBe(200);
    expect((await server.admin('GET', `/accounts/${ids.account}/webhook-secret`)).body).toEqual(secretBefore.body);
    expect((await server.admin('GET', '/status')).body.queue.paused).toBe(false);
  });

  it('answer 403 or 404 with the token from an address outside the admin network rule', async () => {
    const outside = await startTestServer({ adminAllow: ['192.0.2.0/24'] });
    try {
      const outsidePort = Number(new URL(outside.url).port);
      const reached: string[] = [];
      for (const op of operations(adminOpenApiDocument(outside.url), '/admin/api')) {
        if (op.method !== 'GET') continue;
        const path = concrete(op.path);
        for (const spelling of [path, ...variants(path), '/admin', '/admin/', '/ADMIN/', '/Admin/index.html']) {
          const answer = await rawRequest(outsidePort, {
            method: 'GET',
            path: spelling,
            headers: [['Authorization', `Bearer ${outside.srv.adminToken}`]],
          });
          if (![403, 404].includes(answer.status)) reached.push(`GET ${spelling} → ${answer.status}`);
        }
      }
      expect(reached).toEqual([]);
    } finally {
      await outside.close();
    }
  });
});

describe('v1 routes spelled another way', () => {
  it('answer 401 or 404 without a key, never 2xx', async () => {
    const { reached } = await tryEverySpelling(operations(v1OpenApiDocument(server.url), '/v1'), '{"url":"http://127.0.0.1:9/"}');
    expect(reached).toEqual([]);
  });

  it('serves the panel only at its own lower-case address', async () => {
    for (const spelling of ['/ADMIN/', '/Admin/', '/%61dmin/', '//admin/', '/ADMIN/index.html']) {
      const answer = await rawRequest(port, { method: 'GET', path: spelling });
      expect(answer.status, spelling).toBe(404);
    }
    expect((await rawRequest(port, { method: 'GET', path: '/admin/' })).status).toBe(200);
  });
});
