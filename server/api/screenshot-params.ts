import type { ImageFormat } from '../capture/engine.js';
import { DEVICE_NAMES, type DeviceName } from '../capture/presets.js';
import { ValidationError } from '../errors.js';
import type { CreateParams } from '../jobs/job-record.js';

const FIELDS = ['url', 'devices', 'callback_url', 'full_page', 'googlebot', 'width', 'height', 'format', 'quality'];
const FORMATS: ImageFormat[] = ['png', 'jpeg', 'webp'];
export const MAX_URL_LENGTH = 4096;

function httpUrl(field: string, value: unknown, maxLength: number): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ValidationError(`${field} must be a non-empty string`, field);
  const text = value.trim();
  if (text.length > maxLength) throw new ValidationError(`${field} is longer than ${maxLength} characters`, field);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError(`${field} is not a valid URL; it must include the scheme http:// or https://`, field);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ValidationError(`${field} must use the scheme http:// or https://`, field);
  }
  if (!url.hostname) throw new ValidationError(`${field} has no host`, field);
  return url.href;
}

function integer(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ValidationError(`${field} must be a whole number from ${min} to ${max}`, field);
  }
  return value;
}

function boolean(field: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new ValidationError(`${field} must be true or false`, field);
  return value;
}

/** `devices` as asked: `all` expands to every device, duplicates collapse, order is kept. */
function devices(value: unknown): DeviceName[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new ValidationError('devices must be a non-empty array of desktop, tablet, mobile or all', 'devices');
  }
  if (value.length > 16) throw new ValidationError('devices holds at most 16 entries', 'devices');
  const out: DeviceName[] = [];
  for (const entry of value) {
    if (entry === 'all') out.push(...DEVICE_NAMES);
    else if (DEVICE_NAMES.includes(entry)) out.push(entry);
    else throw new ValidationError(`devices contains ${JSON.stringify(entry)}; allowed: desktop, tablet, mobile, all`, 'devices');
  }
  return [...new Set(out)];
}

/** Validates a POST /v1/screenshot body; a ValidationError names the offending field. */
export function parseScreenshotParams(body: unknown): CreateParams {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError('The request body must be a JSON object');
  }
  const input = body as Record<string, unknown>;
  const unknown = Object.keys(input).filter((k) => !FIELDS.includes(k));
  if (unknown.length) {
    throw new ValidationError(`Unknown field(s): ${unknown.join(', ')}; allowed: ${FIELDS.join(', ')}`, unknown[0]);
  }
  if (input.url === undefined) throw new ValidationError('url is required', 'url');
  const format = input.format === undefined ? 'png' : (input.format as ImageFormat);
  if (!FORMATS.includes(format)) throw new ValidationError(`format must be one of ${FORMATS.join(', ')}`, 'format');
  let quality: number | null = null;
  if (input.quality !== undefined) {
    if (format === 'png') throw new ValidationError('quality applies only to format jpeg or webp', 'quality');
    quality = integer('quality', input.quality, 1, 100);
  }
  return {
    url: httpUrl('url', input.url, MAX_URL_LENGTH),
    devices: input.devices === undefined ? ['desktop'] : devices(input.devices),
    full_page: input.full_page === undefined ? false : boolean('full_page', input.full_page),
    googlebot: input.googlebot === undefined ? false : boolean('googlebot', input.googlebot),
    callback_url:
      input.callback_url === undefined || input.callback_url === null ? null : httpUrl('callback_url', input.callback_url, 2048),
    width: input.width === undefined ? null : integer('width', input.width, 320, 3840),
    height: input.height === undefined ? null : integer('height', input.height, 240, 4320),
    format,
    quality,
  };
}
