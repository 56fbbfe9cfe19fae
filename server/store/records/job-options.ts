import type { CaptureOptions } from '../../capture/capture-options.js';
import { type AnyJobOption, CAPTURE_OPTIONS, OPTION_ENTRY, RUN_ONLY_OPTIONS, type RunOnlyOption, type SecretOption } from '../../contract/capture-option-table.js';

// A job's capture options as they are kept: what may be shown (JobOptions, in the job record
// and its views) apart from the secrets (JobSecrets) and the options too large for the record,
// both sealed by SecretBox until the job ends (SealedJobValues). Which option is which is said
// once, in contract/capture-option-table.ts.

/** The options that are no secret, and the device scale factor a job may override. */
export type JobOptions = Omit<AnyJobOption, SecretOption | 'html'>;

/**
 * The options whose values are never stored in clear, shown, or logged; `html` (the document
 * and its base_url) is kept with them, so its content is private to the job and gone once it ends.
 */
export type JobSecrets = Pick<CaptureOptions, SecretOption | 'html'>;

/**
 * Most bytes (as JSON) of run-only options a job record keeps, and shows in the admin API and
 * the panel; the rest wait sealed with the job's secrets and go when it ends. NeDB holds every
 * record of the history period in memory (90 days by default): at 1000 jobs a day, records
 * carrying their full styles, scripts and selectors (~0.48 MB each) reach the heap limit in
 * days, where this bounds their options to about a kilobyte.
 */
export const RECORD_OPTIONS_BYTES = 1024;

/** The options sealed apart from a job's record until it ends: its secrets, and the large options (splitJobOptions). */
export type SealedJobValues = JobSecrets & Pick<JobOptions, RunOnlyOption>;

/** The run-only options by their names in a request, in the order a record keeps them. */
export const RUN_ONLY_FIELDS: readonly string[] = RUN_ONLY_OPTIONS.map((e) => e.request);

/**
 * `values` split into those a record keeps (every field but those of `large` past
 * RECORD_OPTIONS_BYTES of JSON, taken in the order of `large` while they fit) and those kept apart.
 */
export function keepWhileFits<T extends object>(values: T, large: readonly string[]): { kept: T; apart: Partial<T> } {
  const kept = { ...values } as Record<string, unknown>;
  const apart: Record<string, unknown> = {};
  let room = RECORD_OPTIONS_BYTES;
  for (const name of large) {
    const value = kept[name];
    if (value === undefined) continue;
    const bytes = Buffer.byteLength(JSON.stringify(value));
    if (bytes <= room) {
      room -= bytes;
      continue;
    }
    delete kept[name];
    apart[name] = value;
  }
  return { kept: kept as T, apart: apart as Partial<T> };
}

/**
 * A job's options split into those its record keeps (every option but the run-only ones past
 * RECORD_OPTIONS_BYTES, taken in turn while they fit) and those sealed apart until it ends.
 */
export function splitJobOptions(options: JobOptions): { kept: JobOptions; apart: Pick<JobOptions, RunOnlyOption> } {
  return keepWhileFits(options, RUN_ONLY_OPTIONS.map((e) => e.option));
}

/** What may be said of the values sealed apart: header and cookie names, whether credentials were given, which options. */
export interface SecretNames {
  headers: string[];
  cookies: string[];
  http_auth: boolean;
  /** The options sealed apart for their size, by their names in the request. Absent: none. */
  options?: string[];
}

/** The names of `secrets` and of the options sealed apart (`apart`), or null when there are none. */
export function secretNames(secrets: JobSecrets | null, apart: Pick<JobOptions, RunOnlyOption> = {}): SecretNames | null {
  const options = Object.keys(apart).map((name) => OPTION_ENTRY.get(name)?.request ?? name);
  if (!secrets && options.length === 0) return null;
  return {
    headers: Object.keys(secrets?.headers ?? {}),
    cookies: (secrets?.cookies ?? []).map((c) => c.name),
    http_auth: secrets?.httpAuth !== undefined,
    ...(options.length ? { options } : {}),
  };
}

/** The options of a job as the admin API and the panel show them: the request's field names, secrets as names only. */
export function optionsView(options: JobOptions | undefined, names: SecretNames | null | undefined): Record<string, unknown> {
  const o = (options ?? {}) as Record<string, unknown>;
  const view: Record<string, unknown> = {
    ...Object.fromEntries(CAPTURE_OPTIONS.filter((e) => e.kept === 'record').map((e) => [e.request, o[e.option]])),
    header_names: names?.headers.length ? names.headers : undefined,
    cookie_names: names?.cookies.length ? names.cookies : undefined,
    http_auth: names?.http_auth || undefined,
    sealed_options: names?.options?.length ? names.options : undefined,
  };
  return Object.fromEntries(Object.entries(view).filter(([, value]) => value !== undefined));
}
