import crypto from 'node:crypto';

import type { DeviceName } from '../capture/presets.js';
import type { CreateParams } from './create-params.js';

/** JSON with the keys of every object sorted, so equal values give equal text. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * What makes two captures the same result: the account, and everything the request asked of
 * the capture for this device (callback_url included, so a served result's webhook went where
 * the asker wants it). The secrets (headers, cookies, credentials) count too, but only through
 * an HMAC under the data directory's key (`digest`), so the stored cache key says nothing of them.
 * `cache_ttl` does not count: it says how old a result the asker accepts, not which result.
 */
export function resultCacheKey(accountId: string, params: CreateParams, device: DeviceName, digest: (text: string) => string): string {
  const identity = {
    account: accountId,
    url: params.url,
    device,
    full_page: params.full_page,
    googlebot: params.googlebot,
    width: params.width,
    height: params.height,
    format: params.format,
    quality: params.quality,
    callback_url: params.callback_url,
    options: params.options,
    secrets: params.secrets ? digest(stableJson(params.secrets)) : null,
  };
  return crypto.createHash('sha256').update(stableJson(identity)).digest('base64url');
}
