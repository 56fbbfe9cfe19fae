import { ValidationError } from '../domain-errors.js';
import { checkKeySegments } from './destination-rules.js';

/** The placeholders a `storage_path` template may hold. */
export const STORAGE_PATH_PLACEHOLDERS = ['job_id', 'device', 'date', 'ext'] as const;
type Placeholder = (typeof STORAGE_PATH_PLACEHOLDERS)[number];

/** What the placeholders stand for in one job's key. */
export type StoragePathValues = Record<Placeholder, string>;

/** The key of a job's upload when the request gave no storage_path. */
const DEFAULT_TEMPLATE = '{job_id}-{device}.{ext}';

/**
 * Checks a request's `storage_path` (400 naming the field): only the known placeholders, no
 * stray brace, no leading slash, no empty, `.` or `..` segment. A request for several devices
 * must tell their keys apart with {job_id} or {device}. The values put in are a job id, a device
 * name, a date and an extension, none of which holds a slash or a dot segment, so a template
 * that passes gives keys that pass.
 */
export function checkStoragePath(template: string, devices: number): void {
  const refuse = (why: string) => {
    throw new ValidationError(`storage_path ${why}`, 'storage_path');
  };
  const rest = template.replace(/\{([^{}]*)\}/g, (_, name: string) => {
    if (!(STORAGE_PATH_PLACEHOLDERS as readonly string[]).includes(name)) {
      refuse(`has the unknown placeholder {${name}}; allowed: ${STORAGE_PATH_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`);
    }
    return 'x';
  });
  if (/[{}]/.test(rest)) refuse('has a brace that opens or closes no placeholder');
  checkKeySegments(template, 'storage_path');
  if (devices > 1 && !template.includes('{job_id}') && !template.includes('{device}')) {
    refuse('must contain {job_id} or {device} when several devices are asked for, or their images would share one key');
  }
}

/** The object key of one job's upload: the destination's prefix, then the template with its placeholders filled. */
export function objectKey(prefix: string, template: string | undefined, values: StoragePathValues): string {
  const key = (template ?? DEFAULT_TEMPLATE).replace(/\{(job_id|device|date|ext)\}/g, (_, name: Placeholder) => values[name]);
  return prefix ? `${prefix}/${key}` : key;
}
