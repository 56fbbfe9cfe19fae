import { describe, expect, it } from 'vitest';

import { parseScreenshotParams } from '../../server/api/screenshot-params.js';
import { CAPTURE_OPTIONS, REQUEST_JOB_FIELDS } from '../../server/contract/capture-option-table.js';
import { ScreenshotRequest } from '../../server/contract/v1.js';
import { type JobOptions, optionsView, RUN_ONLY_FIELDS, secretNames, splitJobOptions } from '../../server/store/records/job-options.js';

/** Validation fills in defaults: each test reads a copy of its request. */
const parse = (body: object) => parseScreenshotParams(structuredClone(body));

/** A request that gives every capture option a value other than its default. */
const EVERY_OPTION = {
  url: 'https://example.com/page',
  format: 'webp',
  wait_until: 'networkidle',
  settle_timeout: 2_500,
  delay: 250,
  wait_for_selector: '#ready',
  selector: 'main',
  scale: 2,
  hide_selectors: ['.ad', '.chat'],
  styles: 'body { color: red }',
  scripts: 'document.title = "x"',
  click_selector: 'button.more',
  block_ads: true,
  block_trackers: true,
  block_cookie_banners: true,
  dark_mode: true,
  reduced_motion: true,
  media_type: 'print',
  headers: { 'X-Token': 'abc' },
  cookies: [{ name: 'sid', value: 'v1', path: '/app', secure: true, http_only: true, same_site: 'Lax' }],
  user_agent: 'Agent/1.0',
  http_auth: { username: 'u', password: 'p' },
  timezone: 'europe/paris',
  locale: 'fr-fr',
  fail_on_http_error: true,
  extract: ['links', 'markdown'],
  image_width: 800,
  image_height: 600,
  omit_background: true,
  storage_path: 'shots/{job_id}.{ext}',
};

/** The options that request makes, written out: the mapping the table must keep. */
const EVERY_OPTION_AS_OPTIONS: JobOptions = {
  waitUntil: 'networkidle',
  settleTimeoutMs: 2_500,
  delayMs: 250,
  waitForSelector: '#ready',
  selector: 'main',
  scale: 2,
  hideSelectors: ['.ad', '.chat'],
  styles: 'body { color: red }',
  scripts: 'document.title = "x"',
  clickSelector: 'button.more',
  blockAds: true,
  blockTrackers: true,
  blockCookieBanners: true,
  darkMode: true,
  reducedMotion: true,
  mediaType: 'print',
  userAgent: 'Agent/1.0',
  timezone: 'Europe/Paris',
  locale: 'fr-FR',
  failOnHttpError: true,
  extract: ['markdown', 'links'],
  imageWidth: 800,
  imageHeight: 600,
  omitBackground: true,
  upload: true,
  storagePath: 'shots/{job_id}.{ext}',
};

describe('the capture option table', () => {
  it('names every field of the v1 request, as an option or as a field of the job', () => {
    const named = new Set<string>([...CAPTURE_OPTIONS.map((e) => e.request), ...REQUEST_JOB_FIELDS]);
    expect(Object.keys(ScreenshotRequest.properties).filter((field) => !named.has(field))).toEqual([]);
  });

  it('names no request field the v1 request lacks, but a monitor\'s own', () => {
    const fields = new Set(Object.keys(ScreenshotRequest.properties));
    const strays = CAPTURE_OPTIONS.filter((e) => !('monitorOnly' in e) && !fields.has(e.request)).map((e) => e.request);
    expect(strays).toEqual([]);
  });

  it('declares each request name and each option name once', () => {
    expect(new Set(CAPTURE_OPTIONS.map((e) => e.request)).size).toBe(CAPTURE_OPTIONS.length);
    expect(new Set(CAPTURE_OPTIONS.map((e) => e.option)).size).toBe(CAPTURE_OPTIONS.length);
  });

  it('turns a request using every option into the options the engine takes', () => {
    const params = parse(EVERY_OPTION);
    expect(params.options).toEqual(EVERY_OPTION_AS_OPTIONS);
    expect(params.secrets).toEqual({
      headers: { 'X-Token': 'abc' },
      cookies: [{ name: 'sid', value: 'v1', domain: 'example.com', path: '/app', secure: true, httpOnly: true, sameSite: 'Lax' }],
      httpAuth: { username: 'u', password: 'p' },
    });
  });

  it('keeps no option a request leaves at its default', () => {
    const defaults = { url: 'https://example.com', settle_timeout: 8_000, delay: 0, media_type: 'screen', block_ads: false, upload: false, headers: {} };
    const { options, secrets } = parse(defaults);
    expect({ options, secrets }).toEqual({ options: {}, secrets: null });
  });

  it('reads back what a request asked from a record: request, options, record, options again', () => {
    const params = parse(EVERY_OPTION);
    const { kept, apart } = splitJobOptions(params.options);
    expect({ ...kept, ...apart }).toEqual(params.options);
    const view = optionsView({ ...kept, ...apart }, secretNames(params.secrets, apart));
    const { url, format, headers, cookies, http_auth, ...shown } = EVERY_OPTION;
    void [url, format, headers, cookies, http_auth];
    expect(view).toEqual({
      ...shown,
      timezone: 'Europe/Paris',
      locale: 'fr-FR',
      extract: ['markdown', 'links'],
      upload: true,
      header_names: ['X-Token'],
      cookie_names: ['sid'],
      http_auth: true,
    });
  });

  it('seals apart the run-only options past a kilobyte, in their turn, and names them by their request names', () => {
    const big = 'x'.repeat(700);
    const params = parse({ url: 'https://example.com', wait_for_selector: `#${big}`, styles: big, scripts: big, user_agent: 'A' });
    const { kept, apart } = splitJobOptions(params.options);
    expect(Object.keys(apart)).toEqual(['styles', 'scripts']);
    expect(kept).toEqual({ waitForSelector: `#${big}`, userAgent: 'A' });
    expect(secretNames(null, apart)?.options).toEqual(['styles', 'scripts']);
  });

  it('lists the run-only fields in the order a record keeps them', () => {
    expect(RUN_ONLY_FIELDS).toEqual(['wait_for_selector', 'selector', 'click_selector', 'user_agent', 'hide_selectors', 'mask_selectors', 'styles', 'scripts']);
  });
});
