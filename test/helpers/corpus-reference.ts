import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { type Browser, chromium } from 'playwright-core';
import sharp from 'sharp';

import { BASE_ARGS } from '../../server/capture/chromium/chromium-switches.js';
import { type Preset, userAgentFor } from '../../server/capture/presets.js';

/**
 * The reference a capture is held against: plain playwright-core in the same Chromium, as a
 * careful script written against it does, with the preset's viewport, scale, `isMobile`,
 * `hasTouch` and user agent; `goto` until `load`; `page.screenshot()`.
 */
export function launchReference(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: BASE_ARGS, timeout: 30_000 });
}

export interface ReferenceOptions {
  preset: Preset;
  fullPage: boolean;
  /** Full page only: the height the picture is cut at, in CSS pixels, as the service's `maxHeight`. */
  maxHeight: number;
  /** CSS added after load (the reference with an effect forced, to compare a deliberate difference). */
  style?: string;
}

export async function referenceCapture(browser: Browser, url: string, options: ReferenceOptions): Promise<Buffer> {
  const { preset } = options;
  const context = await browser.newContext({
    viewport: { width: preset.width, height: preset.height },
    deviceScaleFactor: preset.deviceScaleFactor,
    isMobile: preset.isMobile,
    hasTouch: preset.hasTouch,
    userAgent: userAgentFor(preset, false, browser.version()),
  });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
    if (options.style) await page.addStyleTag({ content: options.style });
    // playwright trims the clip to the page: the full page, down to maxHeight.
    const clip = options.fullPage ? { x: 0, y: 0, width: 1_000_000, height: options.maxHeight } : undefined;
    return await page.screenshot({ fullPage: options.fullPage, clip, type: 'png', timeout: 60_000 });
  } finally {
    await context.close().catch(() => undefined);
  }
}

/**
 * Reference pictures kept across runs, in `dir`: a reference is taken again only when something
 * it depends on changed. Its key holds the Chromium version, every byte of the corpus as served
 * (corpusDigest), the machine's fonts and their configuration (fontsDigest: a package that brings
 * fonts changes which font a page's family names get), the page, the options, and the text of
 * referenceCapture itself, so a change of the recipe takes them all again.
 * SCREENSHOT_CORPUS_REFERENCES=fresh takes every one anew.
 */
export class CachedReferences {
  private browser: Promise<Browser> | undefined;
  private readonly fonts = fontsDigest();
  hits = 0;
  misses = 0;

  constructor(
    private readonly executablePath: string,
    private readonly dir: string,
    private readonly corpus: string,
    private readonly chromiumVersion: string,
    private readonly fresh = process.env.SCREENSHOT_CORPUS_REFERENCES === 'fresh',
  ) {
    fs.mkdirSync(dir, { recursive: true });
  }

  /** The reference of the page at `url` (`pagePath` on the corpus server), kept or taken now. */
  async capture(url: string, pagePath: string, options: ReferenceOptions): Promise<Buffer> {
    const key = crypto
      .createHash('sha256')
      .update(JSON.stringify({ recipe: referenceCapture.toString(), chromium: this.chromiumVersion, corpus: this.corpus, fonts: this.fonts, pagePath, options }))
      .digest('hex');
    const file = path.join(this.dir, `${key}.png`);
    if (!this.fresh && fs.existsSync(file)) {
      this.hits++;
      return fs.readFileSync(file);
    }
    this.misses++;
    this.browser ??= launchReference(this.executablePath);
    const png = await referenceCapture(await this.browser, url, options);
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, png);
    fs.renameSync(temp, file);
    return png;
  }

  async close(): Promise<void> {
    await (await this.browser?.catch(() => undefined))?.close();
  }
}

/**
 * A digest of the corpus as the server serves it: every regular file's path and bytes, and every
 * link's path and target, in path order. About 2 s for its 200 MiB.
 */
export function corpusDigest(root: string): string {
  const hash = crypto.createHash('sha256');
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const stat = fs.lstatSync(full);
      const relative = path.relative(root, full);
      if (stat.isSymbolicLink()) hash.update(`link ${relative} ${fs.readlinkSync(full)}\n`);
      else if (stat.isDirectory()) walk(full);
      else if (stat.isFile()) hash.update(`file ${relative} ${stat.size}\n`).update(fs.readFileSync(full));
    }
  };
  walk(root);
  return hash.digest('hex');
}

/** Where fontconfig finds the machine's fonts and its configuration. */
const FONT_PLACES = ['/usr/share/fonts', '/usr/local/share/fonts', '/etc/fonts', path.join(os.homedir(), '.fonts'), path.join(os.homedir(), '.local/share/fonts')];

/** A digest of the machine's fonts and fontconfig's configuration: every file's path, size and time. */
export function fontsDigest(): string {
  const hash = crypto.createHash('sha256');
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = fs.readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(dir, name);
      const stat = fs.statSync(full, { throwIfNoEntry: false });
      if (stat?.isDirectory()) walk(full);
      else if (stat?.isFile()) hash.update(`${full} ${stat.size} ${stat.mtimeMs}\n`);
    }
  };
  for (const place of FONT_PLACES) walk(place);
  return hash.digest('hex');
}

/** A decoded picture: RGB, row after row. */
export interface Pixels {
  data: Buffer;
  width: number;
  height: number;
}

export async function decode(image: Buffer): Promise<Pixels> {
  const { data, info } = await sharp(image, { limitInputPixels: false }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** A pixel differs when one of its channels is off by more than this (10 % of 255). */
export const CHANNEL_TOLERANCE = 0.1 * 255;

export interface PixelComparison {
  sizeMatch: boolean;
  /** Share of pixels differing by more than CHANNEL_TOLERANCE, 0–1, over the area both pictures cover. */
  differing: number;
  /** The first row (in `a`'s pixels) holding a differing pixel, or -1. */
  firstDifferingRow: number;
}

/** Compares two pictures pixel by pixel over the area they share (their sizes are told apart too). */
export function comparePixels(a: Pixels, b: Pixels): PixelComparison {
  const width = Math.min(a.width, b.width);
  const height = Math.min(a.height, b.height);
  let differing = 0;
  let firstDifferingRow = -1;
  for (let y = 0; y < height; y++) {
    let rowA = y * a.width * 3;
    let rowB = y * b.width * 3;
    for (let x = 0; x < width; x++, rowA += 3, rowB += 3) {
      if (
        Math.abs(a.data[rowA]! - b.data[rowB]!) > CHANNEL_TOLERANCE ||
        Math.abs(a.data[rowA + 1]! - b.data[rowB + 1]!) > CHANNEL_TOLERANCE ||
        Math.abs(a.data[rowA + 2]! - b.data[rowB + 2]!) > CHANNEL_TOLERANCE
      ) {
        differing++;
        if (firstDifferingRow < 0) firstDifferingRow = y;
      }
    }
  }
  const area = width * height;
  return {
    sizeMatch: a.width === b.width && a.height === b.height,
    differing: area > 0 ? differing / area : 1,
    firstDifferingRow,
  };
}
