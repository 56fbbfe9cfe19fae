import fs from 'node:fs';

import { describe, expect, it } from 'vitest';

import { ChromiumEngine } from '../../server/capture/chromium/chromium-engine.js';
import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { chromiumCommandLine } from '../../server/capture/chromium/chromium-switches.js';

const features = (args: string[]) => args.filter((arg) => arg.startsWith('--disable-features='));

describe('chromiumCommandLine', () => {
  it('merges every --disable-features into one switch, the extra ones included', () => {
    const { args } = chromiumCommandLine(undefined, ['--disable-features=Foo,Bar', '--lang=de']);
    expect(features(args)).toHaveLength(1);
    const list = features(args)[0]!.split('=')[1]!.split(',');
    expect(list).toEqual(expect.arrayContaining(['PaintHolding', 'SpareRendererForSitePerProcess', 'Foo', 'Bar']));
    expect(args).toContain('--lang=de');
  });

  it('routes loopback through the egress proxy when one is given', () => {
    const { args } = chromiumCommandLine('http://127.0.0.1:3128');
    expect(args).toContain('--proxy-server=http://127.0.0.1:3128');
    expect(args).toContain('--proxy-bypass-list=<-loopback>');
    expect(chromiumCommandLine(undefined).args.some((arg) => arg.startsWith('--proxy-server'))).toBe(false);
  });

  it("leaves playwright's own --disable-features out of the launched browser's command line", async () => {
    const engine = new ChromiumEngine({ executablePath: findChromium(process.env.CHROMIUM_PATH) });
    try {
      await engine.start();
      const cmdline = fs.readFileSync(`/proc/${engine.browserPid()}/cmdline`, 'latin1').split('\0');
      expect(features(cmdline)).toHaveLength(1);
      expect(features(cmdline)[0]).toContain('SpareRendererForSitePerProcess');
      expect(features(cmdline)[0]).toContain('PaintHolding');
    } finally {
      await engine.close();
    }
  });
});
