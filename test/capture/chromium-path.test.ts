import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { chromiumCandidates, ChromiumNotFoundError, findChromium } from '../../server/capture/chromium/chromium-path.js';

describe('findChromium', () => {
  let dir: string;
  let fakeBrowser: string;
  beforeAll(async () => {
    dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'chromium-path-'));
    fakeBrowser = path.join(dir, 'chromium');
    await fs.promises.writeFile(fakeBrowser, '#!/bin/sh\n', { mode: 0o755 });
    await fs.promises.writeFile(path.join(dir, 'not-executable'), '', { mode: 0o644 });
  });
  afterAll(async () => {
    await fs.promises.rm(dir, { recursive: true, force: true });
  });

  it('uses the explicit path when it is an executable file', () => {
    expect(findChromium(fakeBrowser)).toBe(fakeBrowser);
  });

  it('names the path and the install command when the explicit path is missing', () => {
    const missing = path.join(dir, 'nope');
    expect(() => findChromium(missing)).toThrow(ChromiumNotFoundError);
    expect(() => findChromium(missing)).toThrow(new RegExp(`not found at ${missing}.*apt-get install -y chromium`));
    expect(() => findChromium(path.join(dir, 'not-executable'))).toThrow(ChromiumNotFoundError);
  });

  it("prefers Debian's real binary over the /usr/bin wrapper on this machine", () => {
    expect(findChromium()).toBe('/usr/lib/chromium/chromium');
  });

  it('looks on PATH after the usual places', () => {
    const found = findChromium(undefined, {
      platform: 'linux',
      env: { PATH: `/nowhere${path.delimiter}${dir}` },
      isExecutable: (file) => file === fakeBrowser,
    });
    expect(found).toBe(fakeBrowser);
  });

  it('throws a ChromiumNotFoundError naming apt-get when no browser exists anywhere', () => {
    let error: unknown;
    try {
      findChromium(undefined, { platform: 'linux', env: {}, isExecutable: () => false });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ChromiumNotFoundError);
    expect((error as Error).name).toBe('ChromiumNotFoundError');
    expect((error as Error).message).toContain('apt-get install -y chromium');
    expect((error as Error).message).toContain('/usr/lib/chromium/chromium');
    expect((error as Error).message).toContain('CHROMIUM_PATH');
  });

  it('knows the macOS and Windows install locations', () => {
    expect(chromiumCandidates('darwin')).toContain('/Applications/Google Chrome.app/Contents/MacOS/Google Chrome');
    expect(chromiumCandidates('win32', { PROGRAMFILES: 'C:\\Program Files' })).toContain(
      'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
    );
  });
});
