import fs from 'node:fs';

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CaptureOptions } from '../../server/capture/capture-options.js';
import { ChromiumEngine } from '../../server/capture/chromium/chromium-engine.js';
import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import type { CaptureRequest } from '../../server/capture/engine.js';
import { type DeviceName, PRESETS } from '../../server/capture/presets.js';
import { appMissing, startApp } from '../helpers/apps.js';
import { type AppReference, appReference, drawnShare } from '../helpers/apps-reference.js';
import { comparePixels, decode, launchReference } from '../helpers/corpus-reference.js';
import { forFile } from '../helpers/for-file.js';
import { APP_CASES, type AppCase } from './app-cases.js';

// Real web apps from Debian's packages, started by the test on loopback ports (test/helpers/apps.ts),
// captured by the service's engine and held against a reference taken as a person sees them
// (apps-reference.ts): a plain playwright capture once the view's `drawn` holds, plus a second.
// Live apps never draw the same figures twice, so the measure is the drawn share: the ink (pixels
// off the background) of the service's picture in the parts that must be drawn, over the
// reference's. Each view says how it decides it has drawn (app-cases.ts).
// For each case: the service's default readiness must give a drawn picture and no warning that
// calls it unfinished. An app that draws after `load` is also caught early, at `load` and with a
// short settle cap: a picture that is not drawn must carry `placeholders` or `not_settled` (at
// `load`, unless nothing in it can tell, which the case says), and at `load` one that is drawn
// must carry neither.
// The table of every case is printed at the end (APPS_TABLE=file keeps it, APPS_PICTURES=dir the
// pictures).

/** A picture is drawn when it holds at least this share of the reference's ink in the view's parts. */
const DRAWN_MIN = 0.6;
/** The warnings that call a picture unfinished, or not the app. */
const UNFINISHED = ['placeholders', 'not_settled'];
const FALSE_ALARMS = [...UNFINISHED, 'login_page', 'overlay'];
/** The settle cap of the cases caught early: far shorter than any of these apps takes to draw. */
const SHORT_CAP_MS = 300;

interface Row {
  id: string;
  device: DeviceName;
  readiness: string;
  drawnShare: number;
  differing: number;
  warnings: string[];
  verdict: string;
  ms: number;
  referenceDrawnAfterMs: number;
}

function serviceRequest(url: string, device: DeviceName, options: CaptureOptions): CaptureRequest {
  return {
    url,
    preset: PRESETS[device],
    fullPage: false,
    googlebot: false,
    format: 'png',
    maxHeight: 4_000,
    navigationTimeoutMs: 30_000,
    captureTimeoutMs: 60_000,
    maxSourceBytes: 5_000_000,
    options,
  };
}

function verdictOf(c: AppCase, readiness: string, drawn: boolean, codes: string[]): string {
  const alarms = codes.filter((code) => FALSE_ALARMS.includes(code));
  if (c.warns) return codes.includes(c.warns) ? `${c.warns}, as it should` : `no ${c.warns}`;
  if (drawn) return alarms.length ? `drawn, warned ${alarms.join(', ')}` : 'drawn, no warning';
  const said = codes.filter((code) => UNFINISHED.includes(code));
  if (said.length) return `unfinished, warned ${said.join(', ')}`;
  return readiness === 'load' && c.silentAtLoad ? 'unfinished, not warned (nothing shows it at load)' : 'unfinished, NOT warned';
}

function formatTable(rows: Row[]): string {
  const lines = [
    '| app | preset | readiness | drawn share | % differing | warnings | verdict | time | reference drawn after load |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.id} | ${r.device} | ${r.readiness} | ${r.drawnShare.toFixed(2)} | ${(r.differing * 100).toFixed(1)} | ${r.warnings.join(', ') || '-'} | ${r.verdict} | ${(r.ms / 1000).toFixed(1)} s | ${(r.referenceDrawnAfterMs / 1000).toFixed(1)} s |`,
    ),
  ];
  return lines.join('\n');
}

describe('real web apps captured as a person sees them (the apps corpus)', () => {
  let engine: ChromiumEngine;
  let browser: Browser;
  const rows: Row[] = [];
  const started = Date.now();
  const pictures = process.env.APPS_PICTURES;

  beforeAll(async () => {
    const executablePath = findChromium(process.env.CHROMIUM_PATH);
    engine = new ChromiumEngine({ executablePath });
    [browser] = await Promise.all([launchReference(executablePath), engine.start()]);
    if (pictures) fs.mkdirSync(pictures, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled([engine?.close(), browser?.close()]);
    const table = `${formatTable(rows)}\n${rows.length} captures in ${((Date.now() - started) / 1000).toFixed(0)} s`;
    process.stdout.write(`\n${table}\n`);
    if (process.env.APPS_TABLE) fs.writeFileSync(process.env.APPS_TABLE, `${table}\n`);
  });

  /** The service's capture of `c` on `device`, measured against `reference`, into the table. */
  async function captureAndJudge(c: AppCase, url: string, device: DeviceName, readiness: string, options: CaptureOptions, reference: Promise<AppReference>) {
    const began = Date.now();
    const service = await engine.capture(serviceRequest(url, device, options));
    const ms = Date.now() - began;
    const ref = await reference;
    const [a, b] = await Promise.all([decode(service.image), decode(ref.png)]);
    const share = drawnShare(a, b, ref.boxes, PRESETS[device].deviceScaleFactor);
    const codes = service.warnings.map((w) => w.code);
    const drawn = share >= DRAWN_MIN;
    const row: Row = {
      id: c.id,
      device,
      readiness,
      drawnShare: share,
      differing: comparePixels(a, b).differing,
      warnings: codes,
      verdict: verdictOf(c, readiness, drawn, codes),
      ms,
      referenceDrawnAfterMs: ref.drawnAfterMs,
    };
    rows.push(row);
    if (pictures) {
      const base = `${pictures}/${c.id}_${device}_${readiness.replaceAll(' ', '-')}`;
      fs.writeFileSync(`${base}.service.png`, service.image);
      fs.writeFileSync(`${base}.reference.png`, ref.png);
    }
    const said = service.warnings.map((w) => `${w.code}: ${w.message}`).join('; ');
    const what = `${c.id} ${device} ${readiness}: drawn share ${share.toFixed(2)}, ${(row.differing * 100).toFixed(1)} % of pixels differing, warnings [${said}]`;
    return { drawn, codes, what };
  }

  for (const app of [...new Set(APP_CASES.map((c) => c.app))]) {
    const missing = appMissing(app);
    describe.skipIf(missing !== null)(`${app}${missing ? ` (skipped: ${missing})` : ''}`, () => {
      const running = forFile(() => startApp(app), (a) => a.stop());

      for (const c of APP_CASES.filter((x) => x.app === app)) {
        for (const device of c.presets) {
          let reference: Promise<AppReference> | undefined;
          const referenceOf = (url: string) => (reference ??= appReference(browser, url, PRESETS[device], c.view));

          if (c.warns) {
            it(`warns ${c.warns} on ${c.id} (${device}): the picture is its sign-in form, not the app`, async () => {
              const url = running.url + c.view.path;
              const { codes, what } = await captureAndJudge(c, url, device, 'default', {}, referenceOf(url));
              expect(codes, what).toContain(c.warns);
            }, 120_000);
            continue;
          }

          it(`captures ${c.id} (${device}) drawn, as a person sees it, and calls it finished`, async () => {
            const url = running.url + c.view.path;
            const [readiness, options] = c.settleTimeoutMs ? [`settled, ${c.settleTimeoutMs} ms cap`, { settleTimeoutMs: c.settleTimeoutMs }] : ['default', {}];
            const { drawn, codes, what } = await captureAndJudge(c, url, device, readiness, options, referenceOf(url));
            expect(drawn, what).toBe(true);
            expect(codes.filter((code) => FALSE_ALARMS.includes(code)), what).toEqual([]);
          }, 120_000);

          if (c.live) {
            const early: Array<[string, CaptureOptions]> = [
              ['load', { waitUntil: 'load' }],
              [`settled, ${SHORT_CAP_MS} ms cap`, { settleTimeoutMs: SHORT_CAP_MS }],
            ];
            for (const [readiness, options] of early) {
              it(`warns when ${c.id} (${device}) is caught unfinished (${readiness})`, async () => {
                const url = running.url + c.view.path;
                const { drawn, codes, what } = await captureAndJudge(c, url, device, readiness, options, referenceOf(url));
                const warned = codes.some((code) => UNFINISHED.includes(code));
                if (!drawn && readiness === 'load' && c.silentAtLoad) return;
                if (!drawn) expect(warned, `${what}: not drawn, and not said`).toBe(true);
                // At `load` no wait has run: a drawn picture is finished. At a short cap a live app may still be changing.
                else if (readiness === 'load') expect(warned, `${what}: drawn, yet called unfinished`).toBe(false);
              }, 120_000);
            }
          }
        }
      }
    });
  }
});
