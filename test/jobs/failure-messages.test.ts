import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Resolver } from '../../server/egress/policy.js';
import { type FixtureServer,startFixtureServer } from '../fixtures/fixture-server.js';
import { captureLog } from '../helpers/capture-log.js';
import { closedPort as closedLoopbackPort } from '../helpers/ports.js';
import { startTestServer, type TestServer,waitForJob } from '../helpers/test-server.js';
import { withSettings } from '../helpers/with-settings.js';

const NAVIGATION_TIMEOUT_MS = 4000;
const CAPTURE_TIMEOUT_MS = 4000;
const PAGE_MEMORY_MB = 512;

let server: TestServer;
let fixtures: FixtureServer;
/** Pages only this file needs: redirects, a download, a connection closed unanswered. */
let odd: http.Server;
let oddUrl: string;
/** A loopback port nothing listens on. */
let closedPort: number;
let key: string;
const logged = captureLog();

// Names only this file knows; every one points at loopback or fails as a resolver does.
const resolve: Resolver = async (host) => {
  if (host === 'internal.test') return [{ address: '127.0.0.2', family: 4 }];
  if (host === 'no-addresses.test') return [];
  // What node's DNS resolver throws when the name server does not answer in time.
  if (host === 'slow-dns.test') throw Object.assign(new Error(`queryA ETIMEOUT ${host}`), { code: 'ETIMEOUT', hostname: host });
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
};

beforeAll(async () => {
  fixtures = await startFixtureServer();
  odd = http.createServer((req, res) => {
    if (req.url === '/redirect-loop') return void res.writeHead(302, { location: '/redirect-loop' }).end();
    if (req.url === '/download') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="report.bin"' });
      return void res.end(Buffer.alloc(1024));
    }
    if (req.url === '/hang-up') return void req.socket.destroy();
    if (req.url === '/redirect-denied') return void res.writeHead(302, { location: 'http://127.0.0.2:8080/' }).end();
    if (req.url === '/redirect-denied-tls') return void res.writeHead(302, { location: 'https://127.0.0.2:8443/' }).end();
    if (req.url === '/redirect-nowhere-tls') return void res.writeHead(302, { location: 'https://nowhere.invalid/' }).end();
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => odd.listen(0, '127.0.0.1', done));
  oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
  closedPort = await closedLoopbackPort();
  server = await startTestServer(
    { navigationTimeoutMs: NAVIGATION_TIMEOUT_MS, captureTimeoutMs: CAPTURE_TIMEOUT_MS, pageMemoryMb: PAGE_MEMORY_MB, ratePerSecond: 1000 },
    { resolve, log: logged.log },
  );
  ({ key } = await server.account());
});

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
  odd?.closeAllConnections();
  await new Promise<void>((done) => (odd ? odd.close(() => done()) : done()));
});

async function runJob(url: string) {
  const res = await server.v1('POST', '/screenshot', key, { url });
  expect(res.status).toBe(201);
  const { job_id } = await res.json();
  return waitForJob(server, key, job_id, 60_000);
}

/**
 * Every way a user's request can make a capture fail, and the `error` the job then shows, with
 * the settings that case runs under when they are not the file's. URLs are functions: the
 * fixture servers' ports are known only once they listen.
 */
const failures: Array<[string, () => string, (url: string) => string, Record<string, number>?]> = [
  ['a host name that does not exist', () => 'http://nonexistent.invalid/', () => 'Could not resolve host nonexistent.invalid'],
  ['a host name with no addresses', () => 'http://no-addresses.test/', () => 'Could not resolve host no-addresses.test'],
  ['a name server that does not answer in time', () => 'http://slow-dns.test/', () => 'Timed out resolving host slow-dns.test'],
  ['a port nobody listens on', () => `http://127.0.0.1:${closedPort}/`, (url) => `Could not load ${url}: the connection was refused`],
  // An https page comes through a tunnel, whose refusal Chromium reports without the proxy's answer.
  ['https to a port nobody listens on', () => `https://127.0.0.1:${closedPort}/`, (url) => `Could not load ${url}: the connection was refused`],
  ['a redirect to an https host that does not exist', () => `${oddUrl}/redirect-nowhere-tls`, () => 'Could not resolve host nowhere.invalid'],
  ['a server that hangs up without answering', () => `${oddUrl}/hang-up`, (url) => `Could not load ${url}: the server closed the connection without answering`],
  [
    'https to a server that does not speak TLS',
    () => `${fixtures.url.replace('http:', 'https:')}/small.html`,
    (url) => `Could not load ${url}: the secure connection failed (net::ERR_SSL_PROTOCOL_ERROR)`,
  ],
  ['a redirect loop', () => `${oddUrl}/redirect-loop`, (url) => `Could not load ${url}: too many redirects`],
  ['an address that starts a download', () => `${oddUrl}/download`, (url) => `Could not load ${url}: the address starts a file download`],
  ['a page that never answers', () => `${fixtures.url}/hang`, (url) => `Timed out after 4 s loading ${url}`],
  ['a page that never lets the screenshot finish', () => `${fixtures.url}/loop.html`, (url) => `Timed out after 4 s capturing ${url}`],
  [
    'a page that takes more memory than it may',
    () => `${fixtures.url}/memory-hog.html?mb=1000000`,
    (url) => `The page used more than ${PAGE_MEMORY_MB} MiB of memory and was stopped while capturing ${url}`,
    // The page meets the limit in about two seconds; a capture time-out far beyond that lets a
    // slow machine reach it too, instead of turning this into the time-out's message.
    { capture_timeout_ms: 30_000 },
  ],
  ['an address the egress policy denies', () => 'http://127.0.0.2:8080/', () => 'blocked by egress policy: 127.0.0.2 is a loopback address'],
  [
    'a name that resolves to a denied address',
    () => 'http://internal.test/',
    () => 'blocked by egress policy: internal.test resolves to 127.0.0.2, a loopback address',
  ],
  [
    'a redirect to a denied address',
    () => `${oddUrl}/redirect-denied`,
    () => 'blocked by egress policy: 127.0.0.2 is a loopback address',
  ],
  [
    'a redirect to a denied https address',
    () => `${oddUrl}/redirect-denied-tls`,
    () => 'blocked by egress policy: 127.0.0.2 is a loopback address',
  ],
];

describe('failure messages', () => {
  it.each(failures)('fails %s saying what happened', async (_what, target, expected, settings = {}) => {
    const url = target();
    const job = await withSettings(server, settings, () => runJob(url));
    expect(job.status).toBe('failed');
    expect(job.error).toBe(expected(url));
    expect(job.error).not.toBe('The capture failed unexpectedly');
  });

  it.each([
    ['404', '/status/404'],
    ['500', '/status/500'],
  ])('captures an HTTP %s error page: it is a page, not a failure', async (_status, path) => {
    const job = await runJob(`${fixtures.url}${path}`);
    expect(job.status).toBe('completed');
    expect(job.error).toBeUndefined();
  });

  it('logs no stack trace for any of them', () => {
    expect(logged.records.filter((r) => r.err?.stack || /\n\s+at /.test(r.msg))).toEqual([]);
  });
});
