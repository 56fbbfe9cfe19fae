import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { BASE_ARGS, chromiumCommandLine, sandboxSwitches } from '../../server/capture/chromium/chromium-switches.js';

describe('the capture browser sandbox', () => {
  it('turns the sandbox off for root only', () => {
    expect(chromiumCommandLine(undefined, [], 0).args).toContain('--no-sandbox');
    expect(chromiumCommandLine(undefined, [], 1000).args).not.toContain('--no-sandbox');
    expect(chromiumCommandLine('http://127.0.0.1:3128', [], 999).args).not.toContain('--no-sandbox');
  });

  it('keeps the sandbox where there are no user ids', () => {
    expect(sandboxSwitches(undefined)).toEqual([]);
  });

  it('gives this process the switch its own user needs', () => {
    expect(BASE_ARGS.includes('--no-sandbox')).toBe(process.getuid?.() === 0);
    expect(chromiumCommandLine(undefined).args.includes('--no-sandbox')).toBe(process.getuid?.() === 0);
  });

  it('starts Chromium with the switches of this process', async () => {
    const browser = await chromium.launch({ executablePath: findChromium(process.env.CHROMIUM_PATH), ...chromiumCommandLine(undefined), timeout: 30_000 });
    try {
      const page = await browser.newPage();
      expect(await page.evaluate(() => 1 + 1)).toBe(2);
    } finally {
      await browser.close();
    }
  });
});
