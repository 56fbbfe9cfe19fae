import { BatchRequest } from '../contract/batches.js';
import { httpUrl } from '../contract/http-url.js';
import { validateBody } from '../contract/validate.js';
import { ValidationError } from '../domain-errors.js';
import type { CreateParams } from '../jobs/create-params.js';
import { parseScreenshotParams } from './screenshot-params.js';

/** What a valid POST /v1/batches asks for: one capture per item, and where batch.completed goes. */
export interface BatchParams {
  items: CreateParams[];
  callback_url: string | null;
}

/**
 * Validates a POST /v1/batches body whole before anything is queued: each item over the shared
 * options is a POST /v1/screenshot body, and the first that is not is a ValidationError naming
 * the item's index and its field (`items[3].url`). The batch's `callback_url` is its own
 * (batch.completed); an item's webhook is sent only when the item itself names one.
 */
export function parseBatchParams(body: unknown): BatchParams {
  const { items, callback_url: callbackUrl, ...shared } = validateBody(BatchRequest, body);
  const parsed = items.map((item, index) => {
    try {
      const params = parseScreenshotParams({ ...shared, ...item });
      if (params.devices.length !== 1) throw new ValidationError('a batch item captures one device; list the item once per device', 'devices');
      return params;
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const field = `items[${index}]${err.field ? `.${err.field}` : ''}`;
      throw new ValidationError(`${field}: ${err.message}`, field);
    }
  });
  return { items: parsed, callback_url: callbackUrl === undefined ? null : httpUrl('callback_url', callbackUrl) };
}
