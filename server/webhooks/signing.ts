import { createHmac } from 'node:crypto';

const PREFIX = 'whsec_';

/**
 * The `webhook-signature` header value per the Standard Webhooks specification:
 * `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` for each secret, separated by spaces, so a
 * receiver still holding the previous secret verifies during the 24 hours after a rotation.
 * `timestamp` is Unix seconds, the same number sent as `webhook-timestamp`.
 */
export function signWebhook(secrets: string[], id: string, timestamp: number, body: string): string {
  if (secrets.length === 0) throw new Error('signing a webhook needs at least one secret');
  const content = `${id}.${timestamp}.${body}`;
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
      return `v1,${createHmac('sha256', key).update(content, 'utf8').digest('base64')}`;
    })
    .join(' ');
}
