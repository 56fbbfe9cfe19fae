import sharp from 'sharp';

import type { PageProbe } from '../in-page/warning-probe.js';
import type { Cut } from '../pipeline/capture-clip.js';
import type { SettleReport } from '../pipeline/settle-report.js';
import { blankCanvases } from './blank-canvases.js';
import { pngSize } from './png-size.js';

/** What a completed capture may warn of; docs/api.md says what each means and what to do. */
export const WARNING_CODES = [
  'blank',
  'images_not_loaded',
  'fonts_not_loaded',
  'placeholders',
  'overlay',
  'login_page',
  'truncated',
  'http_error',
  'console_errors',
  'network_busy',
  'not_settled',
  'extract_failed',
  'upload_failed',
] as const;
export type WarningCode = (typeof WARNING_CODES)[number];

/** One thing a completed capture's picture may get wrong. A warning never fails the job. */
export interface CaptureWarning {
  code: WarningCode;
  message: string;
  /** What was measured, for programs (a monitor weighs it): images_not_loaded's only. Absent on others, and on warnings of earlier versions. */
  detail?: MissingImages;
}

/** The measure of images_not_loaded: the images in the picture, the missing ones, and the share of the images' area they take. */
export interface MissingImages {
  images: number;
  missing: number;
  /** 0–1, rounded to 3 places: a broken tracking pixel weighs nothing, a missing hero image most. */
  missing_share: number;
}

/** Fixed elements covering more than this share of the viewport over the page's content are an overlay. */
export const OVERLAY_SHARE = 1 / 3;
/**
 * A fixed element covering more than OVERLAY_SHARE of the viewport and hiding more than this share
 * of the page's content in view is an overlay too: a dialog over a short page, which has little
 * content under it.
 */
export const OVERLAY_HIDDEN_SHARE = 1 / 2;
/** The longest wait for a busy page's network to quiet before a blank picture is taken again. */
const RETAKE_WAIT_MAX_MS = 5_000;

/** Rows of a picture checked first: most pictures differ within them, and the rest is never decoded. */
const FIRST_BAND_ROWS = 256;

/**
 * The colour (`#rrggbb`) of a picture that is all one colour, or null. The picture is the PNG
 * Chromium rendered, so its pixels are exact (JPEG and WebP are encoded from it). sharp decodes it
 * on libvips threads, off the event loop, the top rows first (a PNG is decoded from the top, and
 * only as far as asked), and the whole picture only when they are all one colour; each row is
 * compared with a row of the first pixel (memcmp). bench/capture-warnings.ts measures it against
 * the capture.
 */
export async function oneColour(png: Buffer): Promise<string | null> {
  try {
    return await colourOfPicture(png);
  } catch {
    // A warning never fails the job: a picture sharp cannot read is not called blank.
    return null;
  }
}

async function colourOfPicture(png: Buffer): Promise<string | null> {
  const { width, height } = pngSize(png);
  if (height > FIRST_BAND_ROWS) {
    const band = sharp(png, { limitInputPixels: false, sequentialRead: true }).extract({ left: 0, top: 0, width, height: FIRST_BAND_ROWS });
    if ((await colourOf(band)) === null) return null;
  }
  return colourOf(sharp(png, { limitInputPixels: false, sequentialRead: true }));
}

async function colourOf(image: sharp.Sharp): Promise<string | null> {
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  const pixel = data.subarray(0, info.channels);
  const rowBytes = info.width * info.channels;
  const row = Buffer.alloc(rowBytes, pixel);
  for (let at = 0; at < data.length; at += rowBytes) {
    if (row.compare(data, at, at + rowBytes) !== 0) return null;
  }
  const rgb = info.channels >= 3 ? [...pixel.subarray(0, 3)] : [pixel[0]!, pixel[0]!, pixel[0]!];
  return `#${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

/** A picture as the pipeline took it, with what was in flight as it was taken. */
export interface TakenPicture {
  png: Buffer;
  /** Addresses of the requests in flight as the picture was taken. */
  inFlight: string[];
}

/** How a picture's blankness was decided: its colour when one, and whether it was taken again. */
export interface BlankCheck<T extends TakenPicture> {
  shot: T;
  /** The colour of the final picture when it is one colour, else null. */
  blank: string | null;
  /** Set when a blank picture of a busy page was taken again: how many requests were in flight, and how long the wait was. */
  retaken: { inFlight: number; waitedMs: number } | null;
}

/** What the blank check asks of the page's network: the requests it still waits on, however long they have been held (event streams aside). */
export interface AwaitedNetwork {
  awaited(): number;
  untilNoneAwaited(maxMs: number): Promise<unknown>;
}

/**
 * Checks a picture for being one colour. A blank picture of a page that still had requests in
 * flight — a slow answer held for seconds too, which network_busy and the settled wait count as a
 * long poll — is taken again (`retake`), once, after they ended (at most 5 s, and half of what is
 * left until `deadline`): a page that paints only once its data arrives is then shown.
 */
export async function retakeIfBlank<T extends TakenPicture>(first: T, network: AwaitedNetwork, retake: () => Promise<T>, deadline: number): Promise<BlankCheck<T>> {
  const blank = await oneColour(first.png);
  const awaited = network.awaited();
  if (blank === null || awaited === 0) return { shot: first, blank, retaken: null };
  const started = Date.now();
  await network.untilNoneAwaited(Math.max(0, Math.min(RETAKE_WAIT_MAX_MS, (deadline - started) / 2)));
  const waitedMs = Date.now() - started;
  const shot = await retake();
  return { shot, blank: await oneColour(shot.png), retaken: { inFlight: awaited, waitedMs } };
}

/** Everything the warnings of one capture are decided from. */
export interface CaptureVerdict {
  /** Null for a PDF, which is not checked for one colour. */
  blank: BlankCheck<TakenPicture> | null;
  probe: PageProbe;
  /** The PNG the picture was encoded from, whose canvases are checked for blank ones; null for a PDF. */
  picture: Buffer | null;
  /** How the wait for a settled page ended; null when there was none (`wait_until` other than `settled`). */
  settle: SettleReport | null;
  /** Addresses of the requests in flight as the final picture was taken. */
  inFlight: string[];
  /** What a cut picture kept of what was asked; null when it was not cut. */
  truncated: Cut | null;
  httpStatus: number | null;
  console: { count: number; first: string | null };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
/** The most of an address a message names: a page makes its addresses (a data: URL, a long query) as long as it likes. */
const ADDRESS_SHOWN_CHARS = 200;
const address = (url: string | null) => (url !== null && url.length > ADDRESS_SHOWN_CHARS ? `${url.slice(0, ADDRESS_SHOWN_CHARS)}…` : url);
const quoted = (names: string[]) => names.map((name) => `"${name}"`).join(', ');

/** What a cut kept of what was asked, by the sides it cut: a tall page at the bottom, a wide element at its right, or both. */
function whatWasCut({ of, asked, kept }: Cut): string {
  const px = (n: number) => Math.round(n);
  const cutWidth = px(kept.width) < px(asked.width);
  const cutHeight = px(kept.height) < px(asked.height) || !cutWidth;
  if (cutWidth && cutHeight) {
    return `The ${of} is ${px(asked.width)} × ${px(asked.height)} px; the picture keeps its top left ${px(kept.width)} × ${px(kept.height)} px`;
  }
  if (cutWidth) return `The ${of} is ${px(asked.width)} px wide; the picture stops at ${px(kept.width)} px from its left`;
  return `The ${of} is ${px(asked.height)} px tall; the picture stops at ${px(kept.height)} px`;
}

/** What held the page at the settle cap, where the picture was changing and for how long, and what to try. */
function notSettled({ capMs, holding, changing, busy }: SettleReport): string {
  const held: Array<[string, string]> = [];
  if (holding.includes('picture')) {
    const region = changing && `: a ${Math.round(changing.width)} × ${Math.round(changing.height)} px region at (${Math.round(changing.x)}, ${Math.round(changing.y)}) changed for the last ${(changing.forMs / 1000).toFixed(1)} s`;
    held.push(['The picture was still changing', region || '']);
  }
  if (holding.includes('network')) {
    held.push(['The network was still busy', busy.length > 0 ? `: ${plural(busy.length, 'request')} in flight (first: ${address(busy[0]!)})` : '']);
  }
  if (holding.includes('fonts')) held.push(['Web fonts were still loading', '']);
  const [first = ['The page had not settled', ''], ...rest] = held;
  const sentences = [`${first[0]} at the settle cap (${capMs} ms)${first[1]}.`, ...rest.map(([what, detail]) => `${what}${detail}.`)];
  return `${sentences.join(' ')} Raise settle_timeout, or wait_for_selector for the element that finishes last.`;
}

/** The warnings of a capture, in the order of WARNING_CODES; [] when all is well. */
export async function captureWarnings(verdict: CaptureVerdict): Promise<CaptureWarning[]> {
  const warnings: CaptureWarning[] = [];
  const add = (code: WarningCode, message: string, detail?: MissingImages) => warnings.push(detail ? { code, message, detail } : { code, message });
  const { blank, probe } = verdict;
  const canvases = verdict.picture ? await blankCanvases(verdict.picture, probe.canvases) : [];
  if (blank?.blank) {
    add(
      'blank',
      blank.retaken
        ? `The picture is one colour (${blank.blank}), also when taken again after the page's requests in flight had ended or ${blank.retaken.waitedMs} ms had passed.`
        : `The picture is one colour (${blank.blank}): the page showed nothing but its background.`,
    );
  }
  const { failed, loading, first, shown, missingShare } = probe.images;
  if (failed + loading > 0) {
    const parts = [failed > 0 ? `${failed} failed to load` : '', loading > 0 ? `${loading} had not finished loading` : ''].filter(Boolean);
    add('images_not_loaded', `${plural(failed + loading, 'image')} in the picture ${failed + loading === 1 ? 'is' : 'are'} missing: ${parts.join(', ')} (first: ${address(first)}).`, {
      images: Math.max(shown, failed + loading),
      missing: failed + loading,
      missing_share: Math.round(missingShare * 1000) / 1000,
    });
  }
  const { fonts } = probe;
  if (fonts.failed.length + fonts.loading.length > 0) {
    const parts = [
      fonts.failed.length > 0 ? `${quoted(fonts.failed)} failed to load` : '',
      fonts.loading.length > 0 ? `${quoted(fonts.loading)} had not finished loading` : '',
    ].filter(Boolean);
    add('fonts_not_loaded', `Web fonts ${parts.join('; ')}: text in them is drawn in a fallback font.`);
  }
  const placeholders = probe.placeholders.count + canvases.length;
  if (placeholders > 0) {
    const first = [...probe.placeholders.first, ...canvases.map((name) => `${name} blank`)].slice(0, 2);
    add(
      'placeholders',
      `The picture shows ${plural(placeholders, 'loading state')} (${first.join(', ')}${placeholders > first.length ? ', …' : ''}): the page had not finished drawing. ` +
        'Wait for its content: wait_until settled, wait_for_selector for an element that comes with the data, or a delay.',
    );
  }
  const { overlay } = probe;
  if (overlay && (overlay.over > OVERLAY_SHARE || (overlay.covered > OVERLAY_SHARE && overlay.hidden > OVERLAY_HIDDEN_SHARE))) {
    const percent = (share: number) => `${Math.round(share * 100)}%`;
    add(
      'overlay',
      `A fixed element (${overlay.element}) covers ${percent(overlay.covered)} of the viewport and hides ${percent(overlay.hidden)} of the page's content in it: a dialog or banner may hide the page.`,
    );
  }
  if (probe.login) {
    add(
      'login_page',
      `The page is a sign-in form (${probe.login.form}): the picture shows the login, not what is behind it. ` +
        'Sign in with the capture: cookies with a session, headers with a token, or http_auth for HTTP Basic.',
    );
  }
  if (verdict.truncated) {
    add('truncated', `${whatWasCut(verdict.truncated)}, the most a capture may have.`);
  }
  if (verdict.httpStatus !== null && verdict.httpStatus >= 400) {
    add('http_error', `The page answered HTTP ${verdict.httpStatus}; the picture shows what came with that answer.`);
  }
  if (verdict.console.count > 0) {
    add('console_errors', `The page reported ${plural(verdict.console.count, 'error')} to its console (first: ${verdict.console.first}).`);
  }
  const { inFlight } = verdict;
  if (inFlight.length > 0) {
    add('network_busy', `${plural(inFlight.length, 'request was', 'requests were')} still in flight at capture (first: ${address(inFlight[0]!)}).`);
  } else if (blank?.retaken && !blank.blank) {
    add(
      'network_busy',
      `The first picture was one colour while ${plural(blank.retaken.inFlight, 'request was', 'requests were')} in flight; it was taken again ${blank.retaken.waitedMs} ms later, once the network had quieted.`,
    );
  }
  if (verdict.settle && !verdict.settle.settled) add('not_settled', notSettled(verdict.settle));
  return warnings;
}
