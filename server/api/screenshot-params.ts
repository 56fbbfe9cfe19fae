import { DEVICE_NAMES, type DeviceName } from '../capture/presets.js';
import { ValidationError } from '../errors.js';
import type { CreateParams } from '../jobs/job-record.js';
import { MAX_URL_LENGTH, ScreenshotRequest } from './schemas/v1.js';
import { validateBody } from './validate.js';

export { MAX_URL_LENGTH };

/** An http(s) address, normalised; what a schema cannot say about a URL. */
function httpUrl(field: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new ValidationError(`${field} is not a valid URL; it must include the scheme http:// or https://`, field);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ValidationError(`${field} must use the scheme http:// or https://`, field);
  }
  if (!url.hostname) throw new ValidationError(`${field} has no host`, field);
  return url.href;
}

/** `devices` as asked: `all` expands to every device, duplicates collapse, order is kept. */
function expandDevices(devices: readonly string[]): DeviceName[] {
  return [...new Set(devices.flatMap((d) => (d === 'all' ? [...DEVICE_NAMES] : [d as DeviceName])))];
}

/**
 * Validates a POST /v1/screenshot body against ScreenshotRequest (defaults come from the
 * schema), then checks what a schema cannot: the URLs, and quality only with jpeg or webp.
 * A ValidationError names the offending field.
 */
export function parseScreenshotParams(body: unknown): CreateParams {
  const input = validateBody(ScreenshotRequest, body) as Required<Omit<ScreenshotRequest, 'width' | 'height' | 'quality' | 'callback_url'>> &
    ScreenshotRequest;
  if (input.url.trim() === '') throw new ValidationError('url must be a non-empty string', 'url');
  if (input.quality !== undefined && input.format === 'png') {
    throw new ValidationError('quality applies only to format jpeg or webp', 'quality');
  }
  return {
    url: httpUrl('url', input.url),
    devices: expandDevices(input.devices),
    full_page: input.full_page,
    googlebot: input.googlebot,
    callback_url: input.callback_url ? httpUrl('callback_url', input.callback_url) : null,
    width: input.width ?? null,
    height: input.height ?? null,
    format: input.format,
    quality: input.quality ?? null,
  };
}
