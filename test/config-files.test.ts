import { describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../server/config.js';

describe('the files location', () => {
  it('is a directory from --files DIR or SCREENSHOT_FILES_DIR, as before', () => {
    const dir = loadConfig({ SCREENSHOT_FILES_DIR: '/srv/files' });
    expect(dir.filesDir).toBe('/srv/files');
    expect(dir.objectStorage).toBeUndefined();
    expect(loadConfig({}, { filesDir: 'rel/files' }).filesDir).toMatch(/\/rel\/files$/);
    expect(loadConfig({}).filesDir).toBeUndefined();
  });

  it('is a bucket and a prefix from --files s3://… or SCREENSHOT_FILES_URL, with the endpoint and the presigned lifetime', () => {
    const flag = loadConfig({}, { filesDir: 's3://shots/a/b' });
    expect(flag.filesDir).toBeUndefined();
    expect(flag.objectStorage).toMatchObject({ bucket: 'shots', prefix: 'a/b/' });
    expect(loadConfig({ SCREENSHOT_FILES_URL: 'S3://my.bucket-1//deep/' }).objectStorage).toEqual({ bucket: 'my.bucket-1', prefix: 'deep/', endpoint: undefined, presignSeconds: undefined });
    expect(loadConfig({ SCREENSHOT_FILES_URL: 's3://shots' }).objectStorage?.prefix).toBe('');
    const full = loadConfig({ SCREENSHOT_FILES_URL: 's3://shots/p', SCREENSHOT_S3_ENDPOINT: 'http://minio:9000/', SCREENSHOT_S3_PRESIGNED: '300' });
    expect(full.objectStorage).toEqual({ bucket: 'shots', prefix: 'p/', endpoint: 'http://minio:9000', presignSeconds: 300 });
    // The flag wins over the variables, as every flag does.
    const over = loadConfig({ SCREENSHOT_FILES_URL: 's3://shots/p' }, { filesDir: '/srv/files' });
    expect(over.filesDir).toBe('/srv/files');
    expect(over.objectStorage).toBeUndefined();
  });

  it.each([
    ['http://shots/p', /takes a directory or s3:\/\/bucket\/prefix/],
    ['s3://key:secret@shots/p', /names only the bucket and a prefix: give credentials in AWS_ACCESS_KEY_ID/],
    ['s3://shots:9000/p', /names only the bucket/],
    ['s3://Shots/p', /bucket .* must be 3 to 63 lowercase letters/],
    ['s3://ab/p', /must be 3 to 63/],
    ['s3:///p', /must be 3 to 63/],
    ['s3://shots/p?x=1', /no query or fragment/],
    ['s3://shots/a/../b', /must not hold \. or \.\. segments/],
  ])('refuses %s with a clear error that does not echo the address', (url, message) => {
    let error: unknown;
    try {
      loadConfig({}, { filesDir: url });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('secret');
  });

  it('refuses a SCREENSHOT_FILES_URL that is not an address, a bad endpoint and a bad lifetime', () => {
    expect(() => loadConfig({ SCREENSHOT_FILES_URL: '/srv/files' })).toThrow(/SCREENSHOT_FILES_URL takes s3:\/\/bucket\/prefix/);
    expect(() => loadConfig({ SCREENSHOT_FILES_URL: 's3://shots', SCREENSHOT_S3_ENDPOINT: 'minio:9000' })).toThrow(/SCREENSHOT_S3_ENDPOINT must be an http/);
    expect(() => loadConfig({ SCREENSHOT_FILES_URL: 's3://shots', SCREENSHOT_S3_ENDPOINT: 'http://k:s@minio:9000' })).toThrow(/without credentials/);
    expect(() => loadConfig({ SCREENSHOT_FILES_URL: 's3://shots', SCREENSHOT_S3_PRESIGNED: '0' })).toThrow(/SCREENSHOT_S3_PRESIGNED must be a whole number from 1 to 604800/);
    expect(() => loadConfig({ SCREENSHOT_FILES_URL: 's3://shots', SCREENSHOT_S3_PRESIGNED: '604801' })).toThrow(ConfigError);
  });
});
