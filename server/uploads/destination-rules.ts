import net from 'node:net';

import { httpUrl } from '../contract/http-url.js';
import { ValidationError } from '../domain-errors.js';

// What a storage destination must be, checked when the admin sets it (a 400 naming the field),
// so an upload never meets a destination that could only fail.

/**
 * The endpoint as it is kept: an http(s) URL without user name, password, query or fragment,
 * and without a trailing slash. Where it may connect is the egress guard's decision, at upload time.
 */
export function checkEndpoint(raw: string): string {
  const url = new URL(httpUrl('endpoint', raw));
  if (url.search !== '' || url.hash !== '') throw new ValidationError('endpoint may not have a query or a fragment', 'endpoint');
  return url.href.replace(/\/+$/, '');
}

/**
 * S3's bucket naming rules: 3-63 characters of lower-case letters, digits, dots and hyphens,
 * starting and ending with a letter or digit, no two dots in a row, not shaped like an IPv4
 * address, none of the reserved prefixes and suffixes.
 */
export function checkBucket(name: string): string {
  const refuse = (why: string) => {
    throw new ValidationError(`bucket ${why}`, 'bucket');
  };
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name)) {
    refuse('must be 3 to 63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit');
  }
  if (name.includes('..')) refuse('may not contain two dots in a row');
  if (net.isIPv4(name)) refuse('may not be shaped like an IP address');
  if (name.startsWith('xn--') || name.startsWith('sthree-')) refuse('may not start with xn-- or sthree-');
  if (name.endsWith('-s3alias') || name.endsWith('--ol-s3')) refuse('may not end with -s3alias or --ol-s3');
  return name;
}

/**
 * A key (a prefix, or a request's storage_path) as path segments: no leading slash, no empty,
 * `.` or `..` segment, no backslash or control character. `field` names it in the refusal.
 */
export function checkKeySegments(value: string, field: string): void {
  const refuse = (why: string) => {
    throw new ValidationError(`${field} ${why}`, field);
  };
  if (value.startsWith('/')) refuse('may not start with /');
  if (/[\\\u0000-\u001f\u007f]/.test(value)) refuse('may not contain a backslash or control characters');
  for (const segment of value.split('/')) {
    if (segment === '') refuse('may not contain an empty segment (//)');
    if (segment === '.' || segment === '..') refuse(`may not contain a ${segment} segment`);
  }
}

/** A destination's prefix, without trailing slashes; '' for none. */
export function checkPrefix(raw: string | undefined): string {
  const prefix = (raw ?? '').replace(/\/+$/, '');
  if (prefix === '') {
    if (raw?.startsWith('/')) throw new ValidationError('prefix may not start with /', 'prefix');
    return '';
  }
  checkKeySegments(prefix, 'prefix');
  return prefix;
}

/** An access key id as it may be shown: its first and last four characters, or nothing of one shorter than 12. */
export function maskedKeyId(id: string): string {
  return id.length >= 12 ? `${id.slice(0, 4)}…${id.slice(-4)}` : '••••';
}
