import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ChromiumEngine } from '../../server/capture/chromium/chromium-engine.js';
import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { BrowserCrashedError, type CaptureRequest, type CaptureResult } from '../../server/capture/engine.js';
import { EnginePool, type PoolableEngine } from '../../server/capture/engine-pool.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { captureRequest } from './conformance-cases.js';

/** An engine at the seam: records what it was asked and finishes a capture when told to. */
class HeldEngine implements PoolableEngine {
  readonly name = 'held';
  ready = true;
  closed = false;
  failClose = false;
  checked = 0;
  readonly urls: string[] = [];
  private readonly pending: Array<(err?: Error) => void> = [];

  async start() {}
  isReady() {
    return this.ready;
  }
  chromiumVersion() {
    return '1.0';
  }
  async checkBrowser() {
    this.checked++;
  }
  async close() {
    this.closed = true;
    if (this.failClose) throw new Error('close failed');
  }
  capture(request: CaptureRequest): Promise<CaptureResult> {
    this.urls.push(request.url);
    return new Promise((resolve, reject) =>
      this.pending.push((err) => (err ? reject(err) : resolve({ url: request.url } as unknown as CaptureResult))),
    );
  }
  /** Finishes the oldest capture still running, or fails it with `err`. */
  finishOne(err?: Error) {
    this.pending.shift()?.(err);
  }
}

const req = (url: string) => ({ url }) as CaptureRequest;

describe('EnginePool routing', () => {
  it('sends captures running together to different engines, then to the one with fewest running', async () => {
    const [a, b] = [new HeldEngine(), new HeldEngine()];
    const pool = new EnginePool([a, b]);
    const first = pool.capture(req('1'));
    const second = pool.capture(req('2'));
    const third = pool.capture(req('3'));
    expect(a.urls).toEqual(['1', '3']);
    expect(b.urls).toEqual(['2']);
    b.finishOne();
    await second;
    const fourth = pool.capture(req('4'));
    expect(b.urls).toEqual(['2', '4']);
    a.finishOne();
    a.finishOne();
    b.finishOne();
    await Promise.all([first, third, fourth]);
  });

  it('shares captures made one at a time between the engines in turn', async () => {
    const [a, b] = [new HeldEngine(), new HeldEngine()];
    const pool = new EnginePool([a, b]);
    for (const url of ['1', '2', '3', '4']) {
      const done = pool.capture(req(url));
      (a.urls.at(-1) === url ? a : b).finishOne();
      await done;
    }
    expect(a.urls).toEqual(['1', '3']);
    expect(b.urls).toEqual(['2', '4']);
  });

  it('passes over an engine whose browser is down while another is ready, and is ready while any is', async () => {
    const [a, b] = [new HeldEngine(), new HeldEngine()];
    const pool = new EnginePool([a, b]);
    a.ready = false;
    expect(pool.isReady()).toBe(true);
    expect(pool.browsers()).toEqual({ total: 2, ready: 1, down: [1] });
    void pool.capture(req('1'));
    void pool.capture(req('2'));
    expect(a.urls).toEqual([]);
    expect(b.urls).toEqual(['1', '2']);
    b.ready = false;
    expect(pool.isReady()).toBe(false);
    expect(pool.browsers()).toEqual({ total: 2, ready: 0, down: [1, 2] });
    // None ready: the capture still goes somewhere, to the engine with fewest running, which
    // relaunches its browser for it.
    void pool.capture(req('3'));
    expect(a.urls).toEqual(['3']);
  });

  it('checks the other browsers before it reports a crash, so the retry can avoid one killed with it', async () => {
    const [a, b, c] = [new HeldEngine(), new HeldEngine(), new HeldEngine()];
    const pool = new EnginePool([a, b, c]);
    const crashed = pool.capture(req('1'));
    a.finishOne(new BrowserCrashedError('gone'));
    await expect(crashed).rejects.toBeInstanceOf(BrowserCrashedError);
    expect([a.checked, b.checked, c.checked]).toEqual([0, 1, 1]);
    // Any other failure is the page's, and reported as it is.
    const failed = pool.capture(req('2'));
    b.finishOne(new Error('page error'));
    await expect(failed).rejects.toThrow('page error');
    expect([a.checked, b.checked, c.checked]).toEqual([0, 1, 1]);
  });

  it('closes every engine even when one fails to close, and reports the failure', async () => {
    const [a, b] = [new HeldEngine(), new HeldEngine()];
    a.failClose = true;
    await expect(new EnginePool([a, b]).close()).rejects.toThrow('close failed');
    expect(a.closed && b.closed).toBe(true);
  });
});

describe('EnginePool of two Chromium browsers', () => {
  const executablePath = findChromium(process.env.CHROMIUM_PATH);
  const engines = [new ChromiumEngine({ executablePath, prewarm: 1 }), new ChromiumEngine({ executablePath, prewarm: 1 })];
  const pool = new EnginePool(engines);
  let fixture: FixtureServer;

  beforeAll(async () => {
    fixture = await startFixtureServer();
    await pool.start();
  });
  afterAll(async () => {
    await pool.close();
    await fixture?.close();
  });

  it('runs two captures at once in two browsers: killing one browser fails only the capture inside it', async () => {
    expect(new Set(engines.map((e) => e.browserPid())).size).toBe(2);
    // The page's load waits 1.5 s for its image, so both captures are inside their browsers
    // when the first browser is killed.
    const slowPage = captureRequest(fixture.url, '/embed-image.html?src=/slow%3Fms%3D1500');
    const first = pool.capture(slowPage);
    const second = pool.capture(slowPage);
    const deadline = Date.now() + 15_000;
    while (fixture.seen('/slow').length < 2) {
      if (Date.now() > deadline) throw new Error('the two pages were not both loading');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    process.kill(-engines[0].browserPid()!, 'SIGKILL');

    const [one, two] = await Promise.allSettled([first, second]);
    expect(one.status).toBe('rejected');
    expect((one as PromiseRejectedResult).reason).toBeInstanceOf(BrowserCrashedError);
    expect(two.status).toBe('fulfilled');
    expect((two as PromiseFulfilledResult<CaptureResult>).value.image.length).toBeGreaterThan(0);

    // The pool goes on capturing while the killed browser is relaunched.
    expect(pool.isReady()).toBe(true);
    const next = await pool.capture(captureRequest(fixture.url, '/small.html'));
    expect(next.width).toBe(1920);
  });

  it('retries well after both browsers are killed at once: the capture right after the crash succeeds', async () => {
    for (let round = 0; round < 3; round++) {
      const ready = Date.now() + 15_000;
      while (!engines.every((engine) => engine.isReady() && engine.browserPid() !== undefined)) {
        if (Date.now() > ready) throw new Error('the browsers were not relaunched');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await pool.capture(captureRequest(fixture.url, '/small.html'));
      const running = pool.capture(captureRequest(fixture.url, '/embed-image.html?src=/slow%3Fms%3D1500'));
      const seen = fixture.seen('/slow').length;
      const deadline = Date.now() + 15_000;
      while (fixture.seen('/slow').length === seen) {
        if (Date.now() > deadline) throw new Error('the page was not loading');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      for (const engine of engines) process.kill(-engine.browserPid()!, 'SIGKILL');
      await expect(running).rejects.toBeInstanceOf(BrowserCrashedError);
      // What the job service does next: one more try, at once.
      const retried = await pool.capture(captureRequest(fixture.url, '/small.html'));
      expect(retried.width).toBe(1920);
    }
  });
});
