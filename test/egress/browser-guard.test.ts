import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { ChromiumEngine } from '../../server/capture/chromium/chromium-engine.js';
import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { CaptureError, type CaptureRequest, type CaptureResult } from '../../server/capture/engine.js';
import { PRESETS } from '../../server/capture/presets.js';
import { createEgressPolicy, type Resolver } from '../../server/egress/policy.js';
import { type EgressProxy, startEgressProxy } from '../../server/egress/proxy.js';
import { lineLogger } from '../../server/logger.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { type Canary, startCanary } from './canary.js';
import { type HostilePages, startHostilePages, TRIES } from './hostile-pages.js';

const request = (url: string): CaptureRequest => ({
  url,
  preset: PRESETS.desktop,
  viewport: { width: 800, height: 600 },
  fullPage: false,
  googlebot: false,
  format: 'png',
  maxHeight: 16_384,
  navigationTimeoutMs: 10_000,
  captureTimeoutMs: 10_000,
  maxSourceBytes: 1_000_000,
});

type Outcome = { result: CaptureResult; error?: undefined } | { result?: undefined; error: Error };

describe('the egress guard in front of the Chromium engine', () => {
  let canary: Canary; // 127.0.0.2, denied: must never be reached
  let control: Canary; // 127.0.0.1, allowed: shows each way really reaches an allowed target
  let hostile: HostilePages; // 127.0.0.1 on the canary's port, so only the address tells them apart
  let fixture: FixtureServer;
  let proxy: EgressProxy;
  let engine: ChromiumEngine;
  const denials: string[] = [];

  // Names only this test knows; behind the proxy the browser never resolves a name itself.
  const resolve: Resolver = async (host) => {
    if (host === 'canary.test') return [{ address: '127.0.0.2', family: 4 }];
    if (host === 'both.test') return [{ address: '127.0.0.1', family: 4 }, { address: '127.0.0.2', family: 4 }];
    // Allowed until the page has been served, then moved to the canary (DNS rebinding).
    if (host === 'rebind.test') return [{ address: hostile.paths.includes('/rebind') ? '127.0.0.2' : '127.0.0.1', family: 4 }];
    throw Object.assign(new Error(`${host} is unknown`), { code: 'ENOTFOUND' });
  };

  beforeAll(async () => {
    canary = await startCanary('127.0.0.2');
    control = await startCanary('127.0.0.1');
    hostile = await startHostilePages(canary.port);
    fixture = await startFixtureServer();
    const policy = createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }, { resolve });
    proxy = await startEgressProxy({ policy, log: lineLogger((line) => denials.push(line)) });
    engine = new ChromiumEngine({ executablePath: findChromium(process.env.CHROMIUM_PATH), proxyServer: proxy.url });
    await engine.start();
  });

  afterAll(async () => {
    try {
      await engine?.close();
    } finally {
      await proxy?.close();
      await Promise.all([canary?.close(), control?.close(), hostile?.close(), fixture?.close()]);
    }
    expect(canary.hits()).toBe(0);
  });

  beforeEach(() => {
    denials.length = 0;
  });

  const refusals = (target: Canary) => denials.filter((d) => d.includes(target.host)).length;

  /**
   * Captures `url` as a job would. A hostile page's load, and so the capture, waits until its
   * `tries` at `target` have all shown up, each one reaching it or refused by the proxy (or until
   * `tried` says so): a try that comes late (a worker starting on a loaded machine) is still seen.
   */
  async function capture(url: string, target: Canary, tries = 1, tried?: () => boolean): Promise<Outcome & { hits: number }> {
    const before = target.hits();
    const reached = target.paths.length;
    hostile.holdUntil(tried ?? (() => target.paths.length - reached + refusals(target) >= tries));
    const outcome: Outcome = await engine.capture(request(url)).then(
      (result) => ({ result }),
      (error: Error) => ({ error }),
    );
    return { ...outcome, hits: target.hits() - before };
  }

  it('captures an allowed fixture page and its sub-resources through the proxy', async () => {
    const { result, error } = await capture(`${fixture.url}/images.html?n=5`, control);
    expect(error).toBeUndefined();
    expect(result?.blockedRequests).toBe(0);
    expect(fixture.seen('/img/')).toHaveLength(5);
  });

  it.each([
    ['http://127.0.0.2:PORT/literal', '127.0.0.2 is a loopback address'],
    ['HTTP://127.0.0.2:PORT/upper-case-scheme', '127.0.0.2 is a loopback address'],
    ['http://2130706434:PORT/decimal', '127.0.0.2 is a loopback address'],
    ['http://0x7f000002:PORT/hex', '127.0.0.2 is a loopback address'],
    ['http://0x7f.0.0.2:PORT/hex-part', '127.0.0.2 is a loopback address'],
    ['http://0177.0.0.2:PORT/octal', '127.0.0.2 is a loopback address'],
    ['http://127.2:PORT/short', '127.0.0.2 is a loopback address'],
    ['http://127.0.0.2.:PORT/trailing-dot', '127.0.0.2 is a loopback address'],
    ['http://allowed.example@127.0.0.2:PORT/userinfo', '127.0.0.2 is a loopback address'],
    ['http://[::ffff:127.0.0.2]:PORT/mapped', '::ffff:7f00:2 is the IPv4-mapped form of 127.0.0.2, a loopback address'],
    ['http://[::127.0.0.2]:PORT/compatible', '::7f00:2 is the IPv4-compatible form of 127.0.0.2, a loopback address'],
    ['http://canary.test:PORT/hostname', 'canary.test resolves to 127.0.0.2, a loopback address'],
    ['http://both.test:PORT/allowed-and-denied', 'both.test resolves to 127.0.0.2, a loopback address'],
    // Chromium reports a refused tunnel without the proxy's answer; the engine asks the proxy.
    ['https://127.0.0.2:PORT/tls', '127.0.0.2 is a loopback address'],
  ])('fails a job for %s with the reason, never reaching the canary', async (form, reason) => {
    const { error, hits } = await capture(form.replace('PORT', String(canary.port)), canary);
    expect(hits).toBe(0);
    expect(error).toBeInstanceOf(CaptureError);
    expect(error?.message).toBe(`blocked by egress policy: ${reason}`);
  });

  const ways = ['/redirect', '/meta-refresh', '/js-redirect', '/img', '/iframe', '/fetch', '/websocket', '/worker'];

  it.each(ways)('reaches an allowed target through %s, so the way is real', async (way) => {
    const { hits } = await capture(`${hostile.origin}${way}?to=${encodeURIComponent(control.origin)}`, control, TRIES[way]);
    expect(hits).toBeGreaterThan(0);
  });

  it.each(ways)('never reaches the canary through %s', async (way) => {
    const outcome = await capture(`${hostile.origin}${way}?to=${encodeURIComponent(canary.origin)}`, canary, TRIES[way]);
    expect(outcome.hits).toBe(0);
    expect(refusals(canary)).toBeGreaterThanOrEqual(TRIES[way] ?? 1);
    if (way === '/redirect') {
      // The page the job ends on is the refused one: the job fails and says why.
      expect(outcome.error?.message).toBe('blocked by egress policy: 127.0.0.2 is a loopback address');
    } else if (way === '/meta-refresh' || way === '/js-redirect') {
      // These leave the page after it loaded, so when the refusal shows depends on timing; the
      // job fails either way (the engine's message for a navigation mid-capture is its own).
      expect(outcome.error).toBeDefined();
    } else {
      // Sub-requests are blocked and the page is still captured; the page's own ones are counted
      // (a worker's or a socket's are not requests of the page).
      expect(outcome.error).toBeUndefined();
      if (!['/websocket', '/worker'].includes(way)) expect(outcome.result?.blockedRequests).toBeGreaterThanOrEqual(1);
    }
  });

  it('never reaches the canary through WebRTC STUN or TURN, which would use UDP around the proxy', async () => {
    // ICE gathering sends its first STUN binding requests within a few hundred milliseconds.
    const { hits, error } = await capture(`${hostile.origin}/webrtc?hold=1500&to=${encodeURIComponent(canary.origin)}`, canary);
    expect(error).toBeUndefined();
    expect(hits).toBe(0);
  });

  it('keeps a page on its checked address when its hostname is rebound to the canary', async () => {
    // The page asks its own name again 100 ms after it is served; the capture is held until that
    // try has been refused, so the try is always made (the page's image and favicon, asked of the
    // rebound name as well, are refused first and would pass for it).
    const again = `target=http://rebind.test:${canary.port}/rebind-again reason=rebind.test resolves to 127.0.0.2`;
    const { result, hits } = await capture(`http://rebind.test:${canary.port}/rebind`, canary, 1, () => denials.some((d) => d.includes(again)));
    expect(hostile.paths).toContain('/rebind');
    expect(hits).toBe(0);
    expect(denials.some((d) => d.includes(again)), denials.join('\n')).toBe(true);
    expect(hostile.paths).not.toContain('/rebind-again');
    expect(result?.blockedRequests).toBeGreaterThanOrEqual(1);
  });
});
