import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rawRequest } from '../fuzz/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let port: number;

beforeAll(async () => {
  server = await startTestServer();
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.close();
});

/** Sends bytes as they are and reads the whole answer. */
function sendBytes(bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      resolve({ status: Number(text.slice(9, 12)), headers: text.slice(0, end), body: text.slice(end + 4) });
    });
    socket.write(bytes, 'latin1');
  });
}

const expectJsonError = (body: string | Buffer, error: string) => {
  const parsed = JSON.parse(body.toString());
  expect(parsed).toEqual({ error, message: expect.any(String) });
};

describe('every error is JSON', () => {
  it('405 names the allowed methods in Allow', async () => {
    const answer = await rawRequest(port, { method: 'DELETE', path: '/v1/usage' });
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('HEAD, GET');
    expectJsonError(answer.body, 'Method not allowed');
    expect(JSON.parse(answer.body.toString()).message).toContain('HEAD, GET');
  });

  it('a method the router does not know is 405 too', async () => {
    const answer = await rawRequest(port, { method: 'PROPFIND', path: '/v1/usage' });
    expect(answer.status).toBe(405);
    expectJsonError(answer.body, 'Method not allowed');
  });

  it('404 for an unknown path', async () => {
    const answer = await rawRequest(port, { method: 'GET', path: '/nothing/here' });
    expect(answer.status).toBe(404);
    expectJsonError(answer.body, 'Not found');
  });

  it('431 for headers larger than Node accepts', async () => {
    const answer = await sendBytes(`GET /v1/usage HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(answer.headers).toMatch(/content-type: application\/json/i);
    expectJsonError(answer.body, 'Request header fields too large');
  });

  it('400 for bytes that are not HTTP', async () => {
    for (const bytes of ['GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n', 'HELLO\r\n\r\n', 'GET /\x00 HTTP/1.1\r\n\r\n']) {
      const answer = await sendBytes(bytes);
      expect(answer.status, JSON.stringify(bytes)).toBe(400);
      expectJsonError(answer.body, 'Bad request');
    }
  });

  it('400 for a malformed percent-escape in a route parameter', async () => {
    const admin = await rawRequest(port, {
      method: 'GET',
      path: '/admin/api/keys/%E0%A4%A',
      headers: [['Authorization', `Bearer ${server.srv.adminToken}`]],
    });
    expect([400, 404]).toContain(admin.status);
    expectJsonError(admin.body, admin.status === 400 ? 'Bad request' : 'Not found');
    const { key } = await server.account();
    const v1 = await rawRequest(port, { method: 'GET', path: '/v1/screenshot/%ZZ', headers: [['X-API-Key', key]] });
    expect([400, 404]).toContain(v1.status);
  });
});

describe('admin answers', () => {
  it('are never cached and never sniffed, successes and errors alike', async () => {
    for (const [path, auth, status] of [
      ['/admin/api/accounts', true, 200],
      ['/admin/api/accounts', false, 401],
      ['/admin/api/nothing', true, 404],
    ] as const) {
      const answer = await rawRequest(port, {
        method: 'GET',
        path,
        headers: auth ? [['Authorization', `Bearer ${server.srv.adminToken}`]] : [],
      });
      expect(answer.status, path).toBe(status);
      expect(answer.headers['cache-control'], path).toBe('no-store');
      expect(answer.headers['x-content-type-options'], path).toBe('nosniff');
    }
  });
});
