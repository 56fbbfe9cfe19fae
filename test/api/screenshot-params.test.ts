import { describe, expect, it } from 'vitest';

import { parseScreenshotParams } from '../../server/api/screenshot-params.js';

const parse = (body: unknown) => parseScreenshotParams(body);

describe('POST /v1/screenshot body', () => {
  it('applies the documented defaults', () => {
    expect(parse({ url: 'https://example.com' })).toEqual({
      url: 'https://example.com/',
      devices: ['desktop'],
      full_page: false,
      googlebot: false,
      callback_url: null,
      width: null,
      height: null,
      format: 'png',
      quality: null,
      options: {},
      secrets: null,
      cache_ttl: 0,
    });
  });

  it('expands all, collapses duplicates and keeps the order', () => {
    expect(parse({ url: 'http://a.test', devices: ['mobile', 'all', 'mobile'] }).devices).toEqual(['mobile', 'desktop', 'tablet']);
  });

  it('accepts the scheme in any case', () => {
    expect(parse({ url: 'HTTPS://Example.COM/x' }).url).toBe('https://example.com/x');
  });

  it.each([
    [{}, /url is required/],
    [{ url: 'example.com' }, /url .*http:\/\/ or https:\/\//],
    [{ url: 'ftp://example.com' }, /url must use the scheme/],
    [{ url: 'javascript:alert(1)' }, /url must use the scheme/],
    [{ url: `http://a.test/${'x'.repeat(4100)}` }, /url is longer than 4096/],
    [{ url: 42 }, /url must be a non-empty string/],
    [{ url: 'http://a.test', devices: 'desktop' }, /devices must be a non-empty array/],
    [{ url: 'http://a.test', devices: [] }, /devices must be a non-empty array/],
    [{ url: 'http://a.test', devices: ['phone'] }, /devices contains "phone"/],
    [{ url: 'http://a.test', full_page: 'true' }, /full_page must be true or false/],
    [{ url: 'http://a.test', googlebot: 1 }, /googlebot must be true or false/],
    [{ url: 'http://a.test', fullpage: true }, /Unknown field\(s\): fullpage/],
    [{ url: 'http://a.test', width: 100 }, /width must be a whole number from 320 to 3840/],
    [{ url: 'http://a.test', height: 1.5 }, /height must be a whole number from 240 to 4320/],
    [{ url: 'http://a.test', format: 'gif' }, /format must be one of png, jpeg, webp/],
    [{ url: 'http://a.test', quality: 50 }, /quality applies only to format jpeg or webp/],
    [{ url: 'http://a.test', format: 'jpeg', quality: 0 }, /quality must be a whole number from 1 to 100/],
    [{ url: 'http://a.test', callback_url: 'not a url' }, /callback_url is not a valid URL/],
    [[], /must be a JSON object/],
    [null, /must be a JSON object/],
  ])('refuses %j naming the field', (body, message) => {
    expect(() => parse(body)).toThrow(message);
  });

  it('accepts width, height, format and quality together', () => {
    expect(parse({ url: 'http://a.test', width: 800, height: 600, format: 'webp', quality: 70 })).toMatchObject({
      width: 800,
      height: 600,
      format: 'webp',
      quality: 70,
    });
  });

  it.each([
    'http://user:pw@a.test/',
    'http://user@a.test/',
    'http://:pw@a.test/',
    'http://user:@a.test/',
    'http://@a.test/',
    'http://:@a.test/',
    'HTTP://user:pw@a.test/',
    'HtTpS://user:pw@a.test/',
    'http://user%40corp:pw@a.test/',
    'http://user%3Apw@a.test/',
    'http://a@b@a.test/',
    'http:\\\\user:pw@a.test\\x',
    'http:/\\user:pw@a.test/',
    'http:/user:pw@a.test/',
    'http:user:pw@a.test/',
    '  http://user:pw@a.test/',
    'http://us\ter:p\nw@a.test/',
  ])('refuses credentials in url (%j), pointing to http_auth', (url) => {
    expect(() => parse({ url })).toThrow(/url may not contain a user name or password.*http_auth/);
  });

  it('keeps an @ after the host: in the path, the query or the fragment', () => {
    expect(parse({ url: 'http://a.test/@me?to=x@y#@z' }).url).toBe('http://a.test/@me?to=x@y#@z');
  });
});
