import type { CaptureOptions } from '../../capture/capture-options.js';

// A job's capture options as they are kept: what may be shown (JobOptions, in the job record
// and its views) apart from the secrets (JobSecrets, sealed by SecretBox until the job ends).

/** The options that are no secret, and the device scale factor a job may override. */
export type JobOptions = Omit<CaptureOptions, 'headers' | 'cookies' | 'httpAuth' | 'html'> & {
  /** Device scale factor overriding the preset's. */
  scale?: number;
  /** Also upload the image to the account's storage destination (`upload`, or implied by `storage_path`). */
  upload?: true;
  /** The upload's key template (`storage_path`); the default key when absent. */
  storagePath?: string;
};

/**
 * The options whose values are never stored in clear, shown, or logged; `html` (the document
 * and its base_url) is kept with them, so its content is private to the job and gone once it ends.
 */
export type JobSecrets = Pick<CaptureOptions, 'headers' | 'cookies' | 'httpAuth' | 'html'>;

/** What may be said of a job's secrets: the header and cookie names, and whether credentials were given. */
export interface SecretNames {
  headers: string[];
  cookies: string[];
  http_auth: boolean;
}

/** The names of `secrets`, or null when there are none. */
export function secretNames(secrets: JobSecrets | null): SecretNames | null {
  if (!secrets) return null;
  return {
    headers: Object.keys(secrets.headers ?? {}),
    cookies: (secrets.cookies ?? []).map((c) => c.name),
    http_auth: secrets.httpAuth !== undefined,
  };
}

/** The options of a job as the admin API and the panel show them: the request's field names, secrets as names only. */
export function optionsView(options: JobOptions | undefined, names: SecretNames | null | undefined): Record<string, unknown> {
  const o = options ?? {};
  const view: Record<string, unknown> = {
    wait_until: o.waitUntil,
    delay: o.delayMs,
    wait_for_selector: o.waitForSelector,
    selector: o.selector,
    clip: o.clip,
    scale: o.scale,
    hide_selectors: o.hideSelectors,
    mask_selectors: o.maskSelectors,
    styles: o.styles,
    scripts: o.scripts,
    click_selector: o.clickSelector,
    block_ads: o.blockAds,
    block_trackers: o.blockTrackers,
    block_cookie_banners: o.blockCookieBanners,
    dark_mode: o.darkMode,
    reduced_motion: o.reducedMotion,
    media_type: o.mediaType,
    user_agent: o.userAgent,
    timezone: o.timezone,
    locale: o.locale,
    fail_on_http_error: o.failOnHttpError,
    extract: o.extract,
    image_width: o.imageWidth,
    image_height: o.imageHeight,
    omit_background: o.omitBackground,
    upload: o.upload,
    storage_path: o.storagePath,
    header_names: names?.headers.length ? names.headers : undefined,
    cookie_names: names?.cookies.length ? names.cookies : undefined,
    http_auth: names?.http_auth || undefined,
  };
  return Object.fromEntries(Object.entries(view).filter(([, value]) => value !== undefined));
}
