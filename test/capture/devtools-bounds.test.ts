import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ChromiumEngine } from '../../server/capture/chromium/chromium-engine.js';
import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { PipeGuard } from '../../server/capture/chromium/pipe-guard.js';
import { PageCrashedError } from '../../server/capture/engine.js';
import { OVERSIZED_ANSWER } from '../../server/capture/pipeline/answer-bounds.js';
import { startHugeMessagePages } from '../fixtures/huge-message-pages.js';
import { captureRequest } from './conformance-cases.js';

const executablePath = findChromium(process.env.CHROMIUM_PATH);

let pages: Awaited<ReturnType<typeof startHugeMessagePages>>;
let origin: string;

beforeAll(async () => {
  pages = await startHugeMessagePages();
  origin = pages.origin;
});

afterAll(async () => {
  await pages?.close();
});

describe('a page that makes what crosses to the service huge', () => {
  let engine: ChromiumEngine;
  beforeAll(async () => {
    engine = new ChromiumEngine({ executablePath });
    await engine.start();
  }, 60_000);
  afterAll(async () => {
    await engine?.close();
  });

  const capture = (path: string) => engine.capture(captureRequest(origin, path, { navigationTimeoutMs: 60_000, captureTimeoutMs: 60_000 }));

  it('is captured without its source when its source is 600 MiB once escaped', async () => {
    const result = await capture('/comment.html');
    expect(result.image.length).toBeGreaterThan(0);
    expect(result.html).toBeNull();
  }, 120_000);

  it('is captured, its error counted, when it writes 100 MiB to its console', async () => {
    const result = await capture('/console.html');
    expect(result.html).toContain('<h1>hostile</h1>');
    const warning = result.warnings.find((w) => w.code === 'console_errors');
    expect(warning?.message.length).toBeLessThan(1000);
  }, 120_000);

  it('is captured when it logs huge objects and errors', async () => {
    const result = await capture('/console-object.html');
    expect(result.html).toContain('<h1>hostile</h1>');
  }, 120_000);

  it('is captured when a console of a frame it made takes 100 MiB', async () => {
    const result = await capture('/frame-console.html');
    expect(result.html).toContain('<h1>hostile</h1>');
  }, 120_000);

  it('is captured, or fails as a crashed page, when it throws an exception of 100 MiB', async () => {
    // Chromium's renderer may itself die serialising such an exception: the page fails, not the service.
    const outcome = await capture('/exception.html').then(
      (result) => result.html,
      (err: unknown) => err,
    );
    if (typeof outcome === 'string') expect(outcome).toContain('<h1>hostile</h1>');
    else expect(outcome).toBeInstanceOf(PageCrashedError);
  }, 120_000);

  it('is captured with the start of a title of 20 M characters', async () => {
    const result = await capture('/title.html');
    expect(result.pageTitle.length).toBeLessThanOrEqual(4096);
  }, 120_000);

  it('leaves the browser capturing the next page', async () => {
    const result = await capture('/fine.html');
    expect(result.warnings.find((w) => w.code === 'console_errors')?.message).toContain('a small error');
    expect(engine.isReady()).toBe(true);
  }, 60_000);
});

describe('the pipe guard', () => {
  it('answers a command whose answer is over its bound with an error, and drops such an event', async () => {
    const guard = await PipeGuard.create(executablePath, 1024 * 1024);
    const browser = await chromium.launch({ executablePath: guard.executablePath, args: BASE_ARGS, headless: true });
    try {
      const page = await browser.newPage();
      const messages: string[] = [];
      page.on('console', (message) => messages.push(message.text().slice(0, 20)));
      await page.goto(`${origin}/fine.html`);
      await page.evaluate(() => {
        document.body.appendChild(document.createComment('y'.repeat(2 * 1024 * 1024)));
        console.log('z'.repeat(2 * 1024 * 1024));
        console.log('after');
      });
      const session = await page.context().newCDPSession(page);
      const { root } = await session.send('DOM.getDocument', { depth: 0 });
      await expect(session.send('DOM.getOuterHTML', { nodeId: root.nodeId })).rejects.toThrow(OVERSIZED_ANSWER);
      // The browser goes on: a small answer still comes, and the small event after the large one.
      expect(await page.evaluate(() => document.title)).toBe('hostile');
      await expect.poll(() => messages).toContain('after');
      expect(messages.some((text) => text.startsWith('zzz'))).toBe(false);
    } finally {
      await browser.close();
      await guard.dispose();
    }
  }, 60_000);
});
