import type { SecretBox } from '../../server/crypto/secret-box.js';
import { EndWriteBehind } from '../../server/jobs/end-write-behind.js';
import type { ClusterRunOptions, JobRunnerDeps } from '../../server/jobs/job-runner.js';
import { silentLogger } from '../../server/logger.js';
import { type Settings, SettingsService } from '../../server/settings.js';
import type { JobRecord } from '../../server/store/records/job-record.js';
import { FakeCaptureEngine, type FakeOutcome } from './fake-capture-engine.js';
import { FakeFileStore } from './fake-file-store.js';
import { FakeJobSecretStore, FakeJobStore } from './fake-job-store.js';

/** Settings as the job core reads them: one capture at a time unless asked. */
export function fakeSettings(values: Partial<Settings> = {}): SettingsService {
  const base: Settings = {
    concurrency: 1,
    queue_limit: 100,
    account_queue_share: 50,
    navigation_timeout_ms: 30_000,
    capture_timeout_ms: 30_000,
    retention_days: 30,
    history_days: 365,
    full_page_max_height: 16_384,
    egress_allow: [],
    egress_allow_command_line: [],
    egress_deny_lan: false,
    public_base_url: null,
    ...values,
  };
  return new SettingsService({ load: () => Promise.resolve(null), save: () => Promise.resolve() }, base);
}

/** A clock that moves only when told. */
export class ManualClock {
  constructor(public ms = 1_000_000) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** A box whose sealed values are the JSON itself; the job core only opens them. */
export const plainSecretBox = { open: <T>(sealed: string): T => JSON.parse(sealed) as T, seal: (value: unknown) => JSON.stringify(value) } as unknown as SecretBox;

/** The job core's seams, all fakes, and what they saw. */
export interface FakeJobCore {
  deps: JobRunnerDeps;
  store: FakeJobStore;
  engine: FakeCaptureEngine;
  files: FakeFileStore;
  jobSecrets: FakeJobSecretStore;
  ends: EndWriteBehind;
  clock: ManualClock;
  /** Jobs whose end was announced (their webhook), as stored then. */
  announced: JobRecord[];
  /** Errors the run told `onFailed`. */
  failures: unknown[];
}

/**
 * The deps of a JobRunner with a fake store, engine, files and secrets: `jobs` stored, the
 * engine following `script` (FakeCaptureEngine). `more` replaces any dep (a guard, cluster mode).
 */
export function fakeJobCore(jobs: readonly JobRecord[], script: FakeOutcome[] = [], more: Partial<JobRunnerDeps> & { cluster?: ClusterRunOptions } = {}): FakeJobCore {
  const store = new FakeJobStore(jobs);
  const engine = new FakeCaptureEngine(...script);
  const files = new FakeFileStore();
  const jobSecrets = new FakeJobSecretStore();
  const clock = new ManualClock();
  const announced: JobRecord[] = [];
  const failures: unknown[] = [];
  const ends = new EndWriteBehind({ store, log: silentLogger, onEnded: (job) => announced.push(job) });
  const deps: JobRunnerDeps = {
    store,
    files,
    engine,
    settings: fakeSettings(),
    clock,
    log: silentLogger,
    ends,
    pageSourceMaxBytes: 1_000_000,
    onFailed: (err) => failures.push(err),
    secrets: plainSecretBox,
    jobSecrets,
    ...more,
  };
  return { deps, store, engine, files, jobSecrets, ends, clock, announced, failures };
}
