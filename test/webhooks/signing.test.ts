import { randomBytes } from 'node:crypto';

import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';

import { signWebhook } from '../../server/webhooks/signing.js';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const now = () => Math.floor(Date.now() / 1000);

const headers = (id: string, timestamp: number, signature: string) => ({
  'webhook-id': id,
  'webhook-timestamp': String(timestamp),
  'webhook-signature': signature,
});

describe('webhook signing', () => {
  const body = JSON.stringify({ type: 'screenshot.completed', data: { job_id: 'j1', status: 'completed' } });

  it('produces a signature the Standard Webhooks reference package accepts', () => {
    const key = secret();
    const ts = now();
    const signature = signWebhook([key], 'msg_1', ts, body);
    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(key).verify(body, headers('msg_1', ts, signature))).toEqual(JSON.parse(body));
  });

  it('is rejected for a tampered body', () => {
    const key = secret();
    const ts = now();
    const signature = signWebhook([key], 'msg_1', ts, body);
    expect(() => new Webhook(key).verify(body.replace('completed', 'failed'), headers('msg_1', ts, signature))).toThrow(
      /No matching signature/,
    );
  });

  it('is rejected for another id or timestamp than the signed ones', () => {
    const key = secret();
    const ts = now();
    const signature = signWebhook([key], 'msg_1', ts, body);
    expect(() => new Webhook(key).verify(body, headers('msg_2', ts, signature))).toThrow();
    expect(() => new Webhook(key).verify(body, headers('msg_1', ts - 1, signature))).toThrow();
  });

  it('is rejected by a receiver holding a different secret', () => {
    const ts = now();
    const signature = signWebhook([secret()], 'msg_1', ts, body);
    expect(() => new Webhook(secret()).verify(body, headers('msg_1', ts, signature))).toThrow(/No matching signature/);
  });

  it('signs with the new and the previous secret after a rotation, so both receivers verify', () => {
    const [current, previous] = [secret(), secret()];
    const ts = now();
    const signature = signWebhook([current, previous], 'msg_1', ts, body);
    expect(signature.split(' ')).toHaveLength(2);
    expect(() => new Webhook(current).verify(body, headers('msg_1', ts, signature))).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers('msg_1', ts, signature))).not.toThrow();
    expect(() => new Webhook(secret()).verify(body, headers('msg_1', ts, signature))).toThrow();
  });

  it('signs non-ASCII bodies as UTF-8, as receivers read them', () => {
    const key = secret();
    const ts = now();
    const text = JSON.stringify({ type: 'screenshot.failed', data: { error: 'Zeitüberschreitung — ページ' } });
    expect(() => new Webhook(key).verify(text, headers('msg_u', ts, signWebhook([key], 'msg_u', ts, text)))).not.toThrow();
  });

  it('refuses to sign without a secret', () => {
    expect(() => signWebhook([], 'msg_1', now(), body)).toThrow();
  });
});
