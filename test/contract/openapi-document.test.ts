import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';

import { adminOpenApiDocument } from '../../server/api/openapi/admin-document.js';
import { v1OpenApiDocument } from '../../server/api/openapi/v1-document.js';
import { ContractChecker } from './openapi-checker.js';

async function validate(doc: Record<string, unknown>) {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc));
  return { valid: result.valid, errors: result.errors ?? [], version: validator.version };
}

/** Every `$ref` in a document, with where it is. */
function refs(node: unknown, at = '#'): Array<{ ref: string; at: string }> {
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([k, v]) =>
    k === '$ref' && typeof v === 'string' ? [{ ref: v, at }] : refs(v, `${at}/${k}`),
  );
}

const resolves = (doc: Record<string, any>, ref: string) =>
  ref
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<any>((node, key) => node?.[key], doc) !== undefined;

describe.each([
  ['v1', v1OpenApiDocument('http://127.0.0.1:8080')],
  ['admin', adminOpenApiDocument('http://127.0.0.1:8080')],
])('the %s OpenAPI document', (_name, doc) => {
  it('validates as OpenAPI 3.1', async () => {
    const result = await validate(doc);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    expect(result.version).toBe('3.1');
  });

  it('would not validate with a response that lacks its description', async () => {
    const broken = structuredClone(doc) as any;
    const firstPath = Object.values(broken.paths)[0] as any;
    const operation = Object.values(firstPath).find((v: any) => v?.responses) as any;
    delete (Object.values(operation.responses)[0] as any).description;
    expect((await validate(broken)).valid).toBe(false);
  });

  it('has no $ref that points nowhere', () => {
    const broken = refs(doc).filter(({ ref }) => !ref.startsWith('#/') || !resolves(doc, ref));
    expect(broken).toEqual([]);
  });

  it('gives every operation a unique operationId and a success response', () => {
    const ops = new ContractChecker(doc, '').operations();
    const ids = ops.map((op) => {
      const [method, path] = op.split(' ');
      const operation = (doc.paths as any)[path][method.toLowerCase()];
      expect(Object.keys(operation.responses).some((s) => /^2/.test(s)), op).toBe(true);
      return operation.operationId;
    });
    expect(ids.every(Boolean)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('compiles every schema it holds', () => {
    const checker = new ContractChecker(doc, '');
    const problems = Object.keys((doc.components as any).schemas).flatMap((name) => {
      try {
        checker.checkSchema(name, {});
        return [];
      } catch (err) {
        return [`${name}: ${(err as Error).message}`];
      }
    });
    expect(problems).toEqual([]);
  });
});

describe('the v1 document', () => {
  it('points clients at the v1 base of the address it was fetched from', () => {
    expect(v1OpenApiDocument('https://shots.example.test').servers).toEqual([{ url: 'https://shots.example.test/v1' }]);
  });

  it('rejects a job that breaks the presence rules of the specification', () => {
    const checker = new ContractChecker(v1OpenApiDocument('http://h'), '/v1');
    const completed = {
      job_id: 'job_0123456789abcdef01234567',
      status: 'completed',
      progress: 100,
      url: 'http://a.test/',
      preset: 'desktop',
      full_page: false,
      googlebot: false,
      created_at: '2026-01-01 00:00:00',
      screenshot_url: 'http://h/v1/files/x.png',
      completed_at: '2026-01-01 00:00:01',
      has_page_source: true,
      warnings: [{ code: 'overlay', message: 'A fixed element covers 60% of the viewport' }],
    };
    expect(checker.checkSchema('ScreenshotJob', completed)).toEqual([]);
    const { warnings: _none, ...withoutWarnings } = completed;
    expect(checker.checkSchema('ScreenshotJob', withoutWarnings)).not.toEqual([]);
    expect(checker.checkSchema('ScreenshotJob', { ...completed, warnings: [{ code: 'ugly', message: 'x' }] })).not.toEqual([]);
    expect(checker.checkSchema('ScreenshotJob', { ...completed, error: 'boom' })).not.toEqual([]);
    const { screenshot_url: _omit, ...withoutImage } = completed;
    expect(checker.checkSchema('ScreenshotJob', withoutImage)).not.toEqual([]);
    expect(checker.checkSchema('ScreenshotJob', { ...completed, status: 'failed', progress: 0 })).not.toEqual([]);
    expect(checker.checkSchema('ScreenshotJob', { ...completed, created_at: '2026-01-01T00:00:00Z' })).not.toEqual([]);
  });
});
