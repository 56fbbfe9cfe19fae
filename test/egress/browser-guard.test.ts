import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { egressChromiumArgs } from '../../server/egress/chromium-args.js';
import { createEgressPolicy, type Resolver } from '../../server/egress/policy.js';
import { DENIED_HEADER, startEgressProxy, type EgressProxy } from '../../server/egress/proxy.js';
import { startFixtureServer, type FixtureServer } from '../fixtures/fixture-server.js';
import { startCanary, type Canary } from './canary.js';
import { startHostilePages, type HostilePages } from './hostile-pages.js';

const CHROMIUM = '/usr/lib/chromium/chromium';
const FLAGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-gpu', '--disable-quic'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done()` holds or `ms` pass; the caller asserts what happened. */
async function settle(done: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await sleep(25);
  await sleep(150); // stragglers: a second request the page might still make
}

describe('the egress guard in front of Chromium', () => {
  let canary: Canary; // 127.0.0.2, denied: must never be reached
  let control: Canary; // 127.0.0.1, allowed: shows each vector really reaches an allowed target
  let hostile: HostilePages; // 127.0.0.1 on the canary's port, for the rebinding case
  let fixture: FixtureServer;
  let proxy: EgressProxy;
  let browser: Browser;
  let context: BrowserContext;
  const denials: string[] = [];

  // Names only this test knows; the browser never resolves anything itself behind the proxy.
  const resolve: Resolver = async (host) => {
    if (host === 'canary.test') return [{ address: '127.0.0.2', family: 4 }];
    if (host === 'control.test') return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'both.test') return [{ address: '127.0.0.1', family: 4 }, { address: '127.0.0.2', family: 4 }];
    // Allowed until the page has loaded, then moved to the canary (DNS rebinding).
    if (host === 'rebind.test') return [{ address: hostile.paths.includes('/rebind') ? '127.0.0.2' : '127.0.0.1', family: 4 }];
    throw Object.assign(new Error(`${host} is unknown`), { code: 'ENOTFOUND' });
  };

  beforeAll(async () => {
    canary = await startCanary('127.0.0.2');
    control = await startCanary('127.0.0.1');
    hostile = await startHostilePages(canary.port);
    fixture = await startFixtureServer();
    const policy = createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }, { resolve });
    proxy = await startEgressProxy({ policy, log: (m) => denials.push(m) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...egressChromiumArgs(proxy.url)] });
  });

  afterAll(async () => {
    try {
      await browser?.close();
    } finally {
      await proxy?.close();
      await Promise.all([canary?.close(), control?.close(), hostile?.close(), fixture?.close()]);
    }
  });

  beforeEach(async () => {
    context = await browser.newContext({ serviceWorkers: 'block' });
    denials.length = 0;
  });

  afterEach(async () => {
    await context?.close();
    expect(canary.hits()).toBe(0);
  });

  const deniedFor = (target: Canary) => () => denials.some((d) => d.includes(`${target.host}:${target.port}`) || d.includes(target.host));

  /** Opens a page and keeps it open until the canary is reached or the proxy refused a try. */
  async function visit(url: string, target: Canary, before = target.hits()) {
    const page = await context.newPage();
    const blocked: string[] = [];
    page.on('response', (r) => {
      if (r.headers()[DENIED_HEADER]) blocked.push(r.url());
    });
    page.on('requestfailed', (r) => {
      if (r.failure()?.errorText === 'net::ERR_TUNNEL_CONNECTION_FAILED') blocked.push(r.url());
    });
    await page.goto(url, { waitUntil: 'commit', timeout: 10_000 }).catch(() => {});
    await settle(() => target.hits() > before || deniedFor(target)());
    await page.close();
    return { hits: target.hits() - before, blocked };
  }

  it('loads allowed fixture pages and their sub-resources through the proxy', async () => {
    const page = await context.newPage();
    const answer = await page.goto(`${fixture.url}/images.html?n=5`);
    await page.waitForLoadState('load');
    await page.close();
    expect(answer?.status()).toBe(200);
    expect(fixture.seen('/img/').length).toBe(5);
  });

  it.each([
    ['http://127.0.0.2:PORT/literal'],
    ['HTTP://127.0.0.2:PORT/upper-scheme'],
    ['http://2130706434:PORT/decimal'],
    ['http://0x7f000002:PORT/hex'],
    ['http://0177.0.0.2:PORT/octal'],
    ['http://127.2:PORT/short'],
    ['http://127.0.0.2.:PORT/trailing-dot'],
    ['http://allowed.example@127.0.0.2:PORT/userinfo'],
    ['http://[::ffff:127.0.0.2]:PORT/mapped'],
    ['http://[::ffff:7f00:2]:PORT/mapped-hex'],
    ['https://127.0.0.2:PORT/tls'],
    ['http://canary.test:PORT/hostname'],
    ['http://both.test:PORT/allowed-and-denied'],
  ])('never reaches the canary when a job asks for %s directly', async (form) => {
    const url = form.replace('PORT', String(canary.port));
    const { hits, blocked } = await visit(url, canary);
    expect(hits).toBe(0);
    expect(deniedFor(canary)() || denials.some((d) => d.includes('.test'))).toBe(true);
    expect(blocked.length).toBeGreaterThan(0);
  });

  const vectors = ['/redirect', '/meta-refresh', '/js-redirect', '/img', '/iframe', '/fetch', '/websocket', '/worker'];

  it.each(vectors)('reaches an allowed target through %s, so the vector is real', async (vector) => {
    const { hits } = await visit(`${hostile.origin}${vector}?to=${encodeURIComponent(control.origin)}`, control);
    expect(hits).toBeGreaterThan(0);
  });

  it.each(vectors)('never reaches the canary through %s', async (vector) => {
    const { hits, blocked } = await visit(`${hostile.origin}${vector}?to=${encodeURIComponent(canary.origin)}`, canary);
    expect(hits).toBe(0);
    expect(deniedFor(canary)()).toBe(true);
    // What the capture engine counts as blocked requests (workers and sockets are not page requests).
    if (!['/websocket', '/worker'].includes(vector)) expect(blocked.some((u) => u.startsWith(canary.origin))).toBe(true);
  });

  it('never reaches the canary through WebRTC STUN and TURN, which would use UDP around the proxy', async () => {
    const page = await context.newPage();
    await page.goto(`${hostile.origin}/webrtc?to=${encodeURIComponent(canary.origin)}`);
    // ICE gathering sends its first STUN binding requests within a few hundred milliseconds.
    await sleep(1500);
    await page.close();
    expect(canary.hits()).toBe(0);
  });

  it('keeps a page on its checked address when its hostname is rebound to the canary', async () => {
    const { hits } = await visit(`http://rebind.test:${canary.port}/rebind`, canary);
    expect(hostile.paths).toContain('/rebind');
    expect(hits).toBe(0);
    expect(denials.some((d) => d.includes('rebind.test resolves to 127.0.0.2'))).toBe(true);
    expect(hostile.paths).not.toContain('/rebind-again');
  });
});
