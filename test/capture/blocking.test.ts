import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

import type { CaptureOptions } from '../../server/capture/capture-options.js';
import { engineWithFixtures } from '../helpers/capture-engine.js';
import { captureRequest } from './conformance-cases.js';

// Ad and tracker hosts of the shipped lists, answered by the fixture server: the browser maps
// them to 127.0.0.1 (none of them is on Chromium's HSTS preload list, so plain http reaches it).
const MAPPED_HOSTS = ['*.doubleclick.net', 'doubleclick.net', '*.adnxs.com', '*.scorecardresearch.com'];

const setup = engineWithFixtures({
  extraArgs: [`--host-resolver-rules=${MAPPED_HOSTS.map((host) => `MAP ${host} 127.0.0.1`).join(', ')}`],
});
/** The fixture server's port, for the mapped hosts' addresses. */
const port = () => new URL(setup.fixture.url).port;

async function capture(path: string, options: CaptureOptions, base = setup.fixture.url) {
  return setup.engine.capture(captureRequest(base, path, { options }));
}

/** The colour at CSS pixel (x, y) of a desktop capture (device pixel ratio 1), as #rrggbb. */
async function colourAt(image: Buffer, x: number, y: number): Promise<string> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return `#${[data[at], data[at + 1], data[at + 2]].map((v) => v!.toString(16).padStart(2, '0')).join('')}`;
}

let runs = 0;
const runId = () => `r${process.pid}-${++runs}`;

describe('block_ads', () => {
  it('leaves an ad server’s image out of the picture, showing the page under it', async () => {
    const result = await capture('/blocking/ad.html', { blockAds: true });
    expect(await colourAt(result.image, 150, 125)).toBe('#ffffff');
    expect(await colourAt(result.image, 550, 125), 'the page’s own image').toBe('#00c000');
  });

  it('shows the ad without the option', async () => {
    const result = await capture('/blocking/ad.html', {});
    expect(await colourAt(result.image, 150, 125)).toBe('#ff0000');
  });

  it('never blocks the page’s own site, even when it is an ad server’s', async () => {
    const run = runId();
    const base = `http://securepubads.g.doubleclick.net:${port()}`;
    const result = await capture(`/blocking/own-site.html?run=${run}`, { blockAds: true }, base);
    expect(result.httpStatus).toBe(200);
    expect(setup.fixture.seen(`/blocking/own.png?run=${run}`), 'an image of another host of the page’s site').toHaveLength(1);
    expect(setup.fixture.seen(`/blocking/other-ad.png?run=${run}`), 'another site’s ad server').toHaveLength(0);
    expect(await colourAt(result.image, 150, 125)).toBe('#00c000');
    expect(await colourAt(result.image, 550, 125)).toBe('#ffffff');
  });

  it('lets trackers through when only ads are blocked', async () => {
    const run = runId();
    await capture(`/blocking/tracker.html?run=${run}`, { blockAds: true });
    expect(setup.fixture.seen(`/blocking/beacon.gif?run=${run}`)).toHaveLength(1);
  });
});

describe('block_trackers', () => {
  it('never sends a tracker’s request', async () => {
    const run = runId();
    await capture(`/blocking/tracker.html?run=${run}`, { blockTrackers: true });
    expect(setup.fixture.seen(`/blocking/beacon.gif?run=${run}`)).toHaveLength(0);
  });

  it('sends it without the option', async () => {
    const run = runId();
    await capture(`/blocking/tracker.html?run=${run}`, {});
    expect(setup.fixture.seen(`/blocking/beacon.gif?run=${run}`)).toHaveLength(1);
  });

  it('blocks with Chromium’s own list when the capture sends headers to the page', async () => {
    const run = runId();
    const result = await capture(`/blocking/tracker.html?run=${run}`, { blockTrackers: true, headers: { 'X-Test': '1' } });
    expect(result.httpStatus).toBe(200);
    expect(setup.fixture.seen(`/blocking/beacon.gif?run=${run}`)).toHaveLength(0);
  });
});

describe('block_cookie_banners', () => {
  it('refuses a OneTrust dialog through its reject button, so the page under it shows unlocked', async () => {
    const before = setup.fixture.seen('/blocking/choice').length;
    const result = await capture('/blocking/onetrust.html', { blockCookieBanners: true });
    expect(await colourAt(result.image, 960, 300), 'the band, not darkened').toBe('#0050ff');
    expect(await colourAt(result.image, 960, 1000), 'where the banner was').toBe('#ffffff');
    expect(setup.fixture.seen('/blocking/choice').slice(before).map((r) => r.path)).toEqual(['/blocking/choice?c=reject']);
  });

  it('hides a consent dialog nothing answers, and undoes its scroll lock', async () => {
    const result = await capture('/blocking/static-cmp.html', { blockCookieBanners: true });
    expect(await colourAt(result.image, 960, 300)).toBe('#0050ff');
    expect(await colourAt(result.image, 960, 1000)).toBe('#ffffff');
    expect(result.html).toMatch(/<body style="overflow: visible !important;/);
  });

  it('shows the dialog without the option', async () => {
    const result = await capture('/blocking/onetrust.html', {});
    expect(await colourAt(result.image, 960, 1000)).toBe('#ff00ff');
    expect(await colourAt(result.image, 960, 300)).not.toBe('#0050ff');
  });
});
