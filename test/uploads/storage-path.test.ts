// The rules of a destination and of a request's storage_path, without a server: each refusal
// is a ValidationError naming its field, and what passes makes the keys expected.
import { describe, expect, it } from 'vitest';

import { checkBucket, checkEndpoint, checkPrefix, maskedKeyId } from '../../server/uploads/destination-rules.js';
import { checkStoragePath, objectKey } from '../../server/uploads/storage-path.js';

const values = { job_id: 'job_0123456789abcdef01234567', device: 'tablet', date: '2026-11-25', ext: 'webp' } as const;

describe('storage_path', () => {
  it('fills every placeholder, under the prefix, and keeps the rest as written', () => {
    expect(objectKey('acme/shots', '{date}/{device}/{job_id}.{ext}', values)).toBe('acme/shots/2026-11-25/tablet/job_0123456789abcdef01234567.webp');
    expect(objectKey('', 'x-{ext}-{ext}.bin', values)).toBe('x-webp-webp.bin');
  });

  it('is <prefix>/<job_id>-<device>.<ext> when the request gave none', () => {
    expect(objectKey('p', undefined, values)).toBe('p/job_0123456789abcdef01234567-tablet.webp');
    expect(objectKey('', undefined, values)).toBe('job_0123456789abcdef01234567-tablet.webp');
  });

  it.each([
    ['{jobid}.png', /unknown placeholder \{jobid\}/],
    ['{JOB_ID}.png', /unknown placeholder/],
    ['{}.png', /unknown placeholder \{\}/],
    ['{job_id.png', /brace/],
    ['job}.png', /brace/],
    ['/abs/{job_id}', /start with \//],
    ['a//{job_id}', /empty segment/],
    ['a/../{job_id}', /\.\. segment/],
    ['../{job_id}', /\.\. segment/],
    ['./{job_id}', /\. segment/],
    ['a/{job_id}/', /empty segment/],
    ['a\\{job_id}', /backslash/],
    ['a\n{job_id}', /control/],
  ])('refuses %j naming storage_path', (template, why) => {
    expect(() => checkStoragePath(template, 1)).toThrow(why);
    expect(() => checkStoragePath(template, 1)).toThrow(expect.objectContaining({ name: 'ValidationError', field: 'storage_path' }));
  });

  it('asks several devices to tell their keys apart', () => {
    expect(() => checkStoragePath('{date}.{ext}', 2)).toThrow(/\{job_id\} or \{device\}/);
    expect(() => checkStoragePath('{device}.{ext}', 3)).not.toThrow();
    expect(() => checkStoragePath('{date}.{ext}', 1)).not.toThrow();
  });
});

describe('the destination rules', () => {
  it('keeps an http(s) endpoint without its trailing slash, and refuses the rest naming endpoint', () => {
    expect(checkEndpoint(' HTTPS://S3.Example.TEST:9000/ ')).toBe('https://s3.example.test:9000');
    for (const bad of ['s3.example.test', 'ftp://s3.example.test', 'https://k:s@s3.example.test', 'https://s3.example.test/?x=1', 'https://s3.example.test/#f', 'file:///etc']) {
      expect(() => checkEndpoint(bad), bad).toThrow(expect.objectContaining({ field: 'endpoint' }));
    }
  });

  it("follows S3's bucket naming rules", () => {
    for (const good of ['abc', 'my-bucket.v2', 'a'.repeat(63), '1-2-3']) expect(checkBucket(good)).toBe(good);
    for (const bad of ['ab', 'a'.repeat(64), 'Abc', 'a_b', '-abc', 'abc-', 'a..b', '10.0.0.1', 'xn--abc', 'sthree-abc', 'abc-s3alias', 'abc--ol-s3', 'a b']) {
      expect(() => checkBucket(bad), bad).toThrow(expect.objectContaining({ field: 'bucket' }));
    }
  });

  it('keeps a prefix without trailing slashes and refuses one that climbs or is rooted', () => {
    expect(checkPrefix(undefined)).toBe('');
    expect(checkPrefix('')).toBe('');
    expect(checkPrefix('a/b//')).toBe('a/b');
    for (const bad of ['/', '/a', 'a/../b', '..', 'a//b', 'a\\b']) expect(() => checkPrefix(bad), bad).toThrow(expect.objectContaining({ field: 'prefix' }));
  });

  it('masks an access key id to its first and last four characters, all of a short one', () => {
    expect(maskedKeyId('AKIAIOSFODNN7EXAMPLE')).toBe('AKIA…MPLE');
    expect(maskedKeyId('short-id')).toBe('••••');
  });
});
