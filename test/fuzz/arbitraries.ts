import fc from 'fast-check';

/** Strings that have broken parsers before: controls, bidi overrides, lone surrogates, traversal, prototype keys. */
const NASTY = [
  '',
  ' ',
  '\u0000',
  '\u202e',
  '\ud800',
  '\udfff',
  '\ufeff',
  '💥',
  'ｈｔｔｐ://example.test',
  'e\u0301',
  '%00',
  '%',
  '%zz',
  '../../../../etc/passwd',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'data:text/html,<b>x</b>',
  'http://',
  'http://[::1',
  'http://127.0.0.1:99999/',
  'http:/\\example.test',
  'HTTP://EXAMPLE.TEST',
  '__proto__',
  'constructor',
  'toString',
  '{"url":1}',
  'null',
  'true',
  '1e309',
  '-0',
];

/**
 * Any text, weighted toward the odd: full Unicode with lone surrogates, graphemes, the nasty
 * list, and (unless `huge` is false, for text that ends up in a URL) strings up to 80,000 long.
 */
export const oddString = ({ huge = true } = {}): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.string() },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
    { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
    {
      weight: huge ? 1 : 0,
      arbitrary: fc
        .tuple(fc.constantFrom('x', 'é', '💥', 'http://a.test/'), fc.integer({ min: 1000, max: 80_000 }))
        .map(([s, n]) => s.repeat(Math.ceil(n / s.length))),
    },
  );

/** Any JSON value, with odd strings and numbers at the edges of what JSON and JavaScript agree on. */
export const oddValue = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 2, arbitrary: oddString() },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        null,
        true,
        false,
        0,
        -1,
        0.5,
        319,
        320,
        3840,
        3841,
        1e308,
        -1e308,
        Number.MAX_SAFE_INTEGER + 2,
        [],
        {},
        [null],
        ['all', 'all'],
        ['desktop', 7],
        { __proto__: null, url: 'http://a.test/' },
      ),
    },
    { weight: 1, arbitrary: fc.array(oddString(), { maxLength: 20 }) },
  );

/** Values a valid request could carry for each create field. */
const VALID_FIELDS = {
  url: fc.oneof(fc.webUrl({ validSchemes: ['http', 'https'] }), fc.constant('http://127.0.0.1:1/fuzz')),
  devices: fc.uniqueArray(fc.constantFrom('desktop', 'tablet', 'mobile', 'all'), { minLength: 1, maxLength: 4 }),
  callback_url: fc.oneof(fc.constant(null), fc.webUrl({ validSchemes: ['http', 'https'] })),
  full_page: fc.boolean(),
  googlebot: fc.boolean(),
  width: fc.integer({ min: 320, max: 3840 }),
  height: fc.integer({ min: 240, max: 4320 }),
  format: fc.constantFrom('png', 'jpeg', 'webp'),
  quality: fc.integer({ min: 1, max: 100 }),
};

/** A body the service must accept: every field valid, quality only with a lossy format. */
export const validScreenshotBody = (): fc.Arbitrary<Record<string, unknown>> =>
  fc
    .record(VALID_FIELDS, { requiredKeys: ['url'] })
    .map((body) => (body.quality !== undefined && body.format !== 'jpeg' && body.format !== 'webp' ? { ...body, format: 'webp' } : body));

/**
 * A POST /v1/screenshot body: sometimes valid, mostly near-valid (each field either a valid
 * value or an odd one, an extra field now and then), sometimes any JSON at all.
 */
export const screenshotBody = (): fc.Arbitrary<unknown> => {
  const field = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: oddValue() });
  const nearValid = fc
    .tuple(
      fc.record(
        {
          url: field(VALID_FIELDS.url),
          devices: field(VALID_FIELDS.devices),
          callback_url: field(VALID_FIELDS.callback_url),
          full_page: field(VALID_FIELDS.full_page),
          googlebot: field(VALID_FIELDS.googlebot),
          width: field(VALID_FIELDS.width),
          height: field(VALID_FIELDS.height),
          format: field(VALID_FIELDS.format),
          quality: field(VALID_FIELDS.quality),
        },
        { requiredKeys: [] },
      ),
      fc.option(fc.tuple(oddString(), oddValue()), { freq: 6 }),
    )
    .map(([record, extra]) => (extra ? { ...record, [extra[0]]: extra[1] } : record));
  return fc.oneof({ weight: 3, arbitrary: validScreenshotBody() }, { weight: 6, arbitrary: nearValid }, { weight: 2, arbitrary: oddValue() }, { weight: 1, arbitrary: fc.dictionary(oddString(), oddValue(), { maxKeys: 5 }) });
};

/** Content-Type headers a client might send, right, wrong and odd. */
export const contentType = (): fc.Arbitrary<string | undefined> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        undefined,
        'application/json; charset=utf-8',
        'APPLICATION/JSON',
        'application/json; charset=utf-16',
        'application/json; charset=nonsense',
        'application/vnd.api+json',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json;;;',
        '',
        '*/*',
      ),
    },
    { weight: 1, arbitrary: headerValue() },
  );

/**
 * A header value HTTP allows on the wire (HTAB, SP, visible ASCII and obs-text bytes),
 * returned as a latin1 string; sometimes very long.
 */
export function headerValue(): fc.Arbitrary<string> {
  const byte = fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0x21, max: 0x7e }) },
    { weight: 1, arbitrary: fc.constantFrom(0x09, 0x20) },
    { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
  );
  return fc.oneof(
    { weight: 8, arbitrary: fc.array(byte, { maxLength: 60 }).map((bytes) => Buffer.from(bytes).toString('latin1').trim()) },
    // Node refuses a header block over 16 KB itself (431), before the app: stay under it.
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 3000 }).map((n) => 'k'.repeat(n)) },
    {
      weight: 2,
      arbitrary: fc.constantFrom('sa_', 'sa_' + 'A'.repeat(43), 'Bearer', 'Bearer ', 'null', '0', '127.0.0.1', '::1, 10.0.0.1', 'ä'),
    },
  );
}

/**
 * A request path: a known prefix followed by segments of legal characters, valid and broken
 * percent-escapes, dots and encoded Unicode, with an odd query now and then.
 */
export function requestPath(): fc.Arbitrary<string> {
  const legal = 'abcXYZ019-._~!$&\'()*+,;=:@';
  const segment = fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: fc.constantFrom(...legal), maxLength: 12 }) },
    { weight: 2, arbitrary: fc.constantFrom('..', '.', '%', '%zz', '%2e%2e', '%2F', '%00', '%c0%af', '%ff', '%E2%80%AE', 'job_000000000000000000000000', 'openapi.json', 'source', 'keys', 'AAAAAAAAAAAAAAAAAAAAAAAA.png') },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }).map((s) => encodeURIComponent(s)) },
  );
  const prefix = fc.constantFrom('/', '/v1/', '/v1/screenshot/', '/v1/files/', '/v1/usage/', '/admin/', '/admin/api/', '/admin/api/accounts/', '/admin/api/keys/', '/admin/api/jobs/', '//', '/healthz/');
  const query = fc.option(
    fc.constantFrom('?include_source=1', '?include_source=%', '?a=1&a=2', '?status[]=x', '?limit=1e3', '?days=-1', '?%', '?&&&', '?before=%00'),
    { freq: 3 },
  );
  return fc
    .tuple(prefix, fc.array(segment, { maxLength: 4 }), query)
    .map(([p, segments, q]) => `${p}${segments.join('/')}${q ?? ''}`);
}

export const method = (): fc.Arbitrary<string> =>
  fc.constantFrom('GET', 'GET', 'POST', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS');
