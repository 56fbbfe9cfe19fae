import crypto from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { type EvidenceContents, packEvidence } from '../../server/capture/outputs/wacz-bundle.js';
import { checkBundle } from '../../server/crypto/evidence-verify.js';

// Packing and checking without a browser: the bundle's layout and signature rules on a
// made-up capture. What a real capture records is test/evidence/evidence-capture.test.ts's.

function signer() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
  return {
    publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    sign: (text: string) => crypto.sign(null, Buffer.from(text), privateKey).toString('base64'),
  };
}

const contents: EvidenceContents = {
  url: 'http://site.test/',
  finalUrl: 'http://site.test/',
  title: 'A page',
  capturedAt: Date.UTC(2026, 10, 28, 12, 0, 0),
  exchanges: [
    {
      url: 'http://site.test/',
      method: 'GET',
      requestHeaders: { Accept: 'text/html' },
      requestBody: null,
      status: 200,
      statusText: 'OK',
      responseHeaders: { 'Content-Type': 'text/html', 'Content-Encoding': 'gzip' },
      protocol: 'http/1.1',
      body: Buffer.from('<h1>Hello</h1>'),
      sentAt: Date.UTC(2026, 10, 28, 11, 59, 59),
    },
  ],
  picture: { data: Buffer.from('not really a png'), contentType: 'image/png' },
  html: '<html><body><h1>Hello</h1></body></html>',
  text: 'Hello',
  metadata: { url: 'http://site.test/' },
  software: 'screenshot-appliance 0.0.0',
};

describe('an evidence bundle', () => {
  it('is valid and signed by the key that packed it', async () => {
    const key = signer();
    const check = await checkBundle(await packEvidence(contents, key), key.publicKey);
    expect(check).toEqual({
      valid: true,
      signed_by_this_appliance: true,
      created_at: '2026-11-28T12:00:00.000Z',
      url: 'http://site.test/',
      public_key: key.publicKey,
      problems: [],
    });
  });

  it('is valid but not this appliance\'s when another key signed it', async () => {
    const check = await checkBundle(await packEvidence(contents, signer()), signer().publicKey);
    expect(check.valid).toBe(true);
    expect(check.signed_by_this_appliance).toBe(false);
  });

  it('is not a ZIP file when it is anything else', async () => {
    const check = await checkBundle(Buffer.from('hello'));
    expect(check.valid).toBe(false);
    expect(check.problems[0]).toMatch(/not a readable ZIP file/);
  });
});
