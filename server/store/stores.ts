import type { Settings } from '../contract/admin.js';
import type { AccountRecord } from './records/account-record.js';
import type { BatchRecord } from './records/batch-record.js';
import type { AttemptRecord, DeliveryDoc, DeliveryStatus } from './records/delivery-record.js';
import type { DestinationRecord } from './records/destination-record.js';
import type { IdempotencyRecord, KeptAnswer } from './records/idempotency-record.js';
import type { EndStatus, JobRecord, JobStatus } from './records/job-record.js';
import type { KeyRecord } from './records/key-record.js';
import type { LoginRecord } from './records/login-record.js';
import type { CheckRecord, MonitorRecord } from './records/monitor-record.js';

/*
 * The stores the services work through. Each backend (NeDB in the data directory, PostgreSQL
 * for a cluster) implements every one of them and passes one conformance suite
 * (test/store/conformance.test.ts); nothing outside server/store/ knows which backend runs.
 * Times are epoch milliseconds; ids are strings the services make (jobs, deliveries) or the
 * store makes (accounts, keys).
 */

/** A page of the admin job list: newest first, after an optional cursor. */
export interface JobListFilter {
  status?: JobStatus;
  account_id?: string;
  /** Only jobs older than this one, in list order (created_at, then id, both descending). */
  before?: { created_at: number; id: string };
  limit: number;
}

/** The fields a job's state changes set. */
export type JobChange = Partial<Omit<JobRecord, '_id' | 'account_id' | 'key_id' | 'batch_id' | 'created_at'>>;

export interface JobStore {
  insert(jobs: readonly JobRecord[]): Promise<void>;
  /**
   * Queues new jobs of one account: inserts them, each given its `turn` in the fair order
   * (fairTurns, from the jobs waiting and running now), and returns them as stored; or, when the
   * account's jobs waiting or running would pass `max` with them, inserts nothing and returns
   * null. One account's enqueues take turns (in PostgreSQL across the nodes of a cluster, under
   * the account's advisory lock), so the bound holds exactly.
   */
  enqueue(jobs: readonly JobRecord[], max: number): Promise<JobRecord[] | null>;
  get(id: string): Promise<JobRecord | null>;
  /** The job holding this image file (GET /v1/files/<name>, unauthenticated: one indexed read). */
  byImage(imageFile: string): Promise<JobRecord | null>;
  /**
   * Sets fields; false when there is no such job, or (with `holder`) when that node no longer
   * holds the job's lease: a node whose lease ran out must not end a job another node now runs.
   */
  update(id: string, change: JobChange, holder?: string): Promise<boolean>;
  /**
   * Cluster mode: gives `node` up to `limit` jobs to run, leased until `until`, from the waiting
   * ones and the running ones whose lease ran out before `now` (their node died), in the fair
   * order: lowest `turn` first (round-robin by account, see fairTurns), the older job first on a
   * tie. Each job goes to one node only, however many claim at once (SKIP LOCKED in PostgreSQL).
   */
  claim(node: string, limit: number, now: number, until: number): Promise<JobRecord[]>;
  /** Jobs running, and jobs waiting that the fair order takes before this one (the estimate of a cluster's queue). */
  countAhead(job: Pick<JobRecord, '_id' | 'turn' | 'created_at'>): Promise<number>;
  /** Cluster mode: extends `node`'s leases of these jobs to `until`; returns the ids it still holds. */
  renew(node: string, ids: readonly string[], until: number): Promise<string[]>;
  /** Up to `limit` jobs with this result-cache key, newest first. */
  byCacheKey(cacheKey: string, limit: number): Promise<JobRecord[]>;
  /** The admin job list: newest first (created_at, then id, descending). */
  list(filter: JobListFilter): Promise<JobRecord[]>;
  /** Jobs waiting or running, oldest first. */
  unfinished(): Promise<JobRecord[]>;
  /** How many jobs match, by account and states (tests and the shutdown line). */
  count(filter?: { account_id?: string; status?: readonly JobStatus[] }): Promise<number>;
  /** Up to `limit` ended jobs created before `cutoff` (the history period's purge). */
  endedBefore(cutoff: number, limit: number): Promise<JobRecord[]>;
  /** Ended jobs not yet expired that ended before `cutoff` (the retention sweep). */
  toExpire(cutoff: number): Promise<JobRecord[]>;
  /** Removes these jobs; returns how many were removed. */
  remove(ids: readonly string[]): Promise<number>;
  /** Up to `limit` ended jobs still marked `webhook_due` that ended before `cutoff`, oldest end first. */
  webhookDue(cutoff: number, limit: number): Promise<JobRecord[]>;
}

/**
 * The sealed secrets (SecretBox) of the jobs that have not ended, one value per job, kept apart
 * from the job records: a record's lines and row versions outlive the job (NeDB appends, backups
 * copy), a secret must not. NeDB: one file per job in `<data>/job-secrets/`, unlinked at the
 * job's end; PostgreSQL: the job_secrets table, its rows deleted at the job's end and vacuumed.
 */
export interface JobSecretStore {
  /** Stores the secrets of jobs about to be inserted (before they are, so a job never waits without them). */
  put(entries: ReadonlyArray<{ id: string; sealed: string }>): Promise<void>;
  /** The job's sealed secrets, or null when none are kept. */
  get(id: string): Promise<string | null>;
  /** Erases the secrets of these jobs (they ended, or were never stored). */
  remove(ids: readonly string[]): Promise<void>;
  /** Erases the secrets of jobs that have ended or are gone (a stop between a job's end and its erasure); how many. */
  sweep(): Promise<number>;
}

/**
 * The store did not answer: a database that is down, out of reach, shutting down or out of
 * connections. It is a passing condition, not a fault: a request meeting it may retry, and a
 * job's end is stored once it is back. `cause` is the driver's error.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  constructor(cause: unknown) {
    super('The database did not answer; try again shortly');
    this.cause = cause;
  }
}

export type NewAccount = Omit<AccountRecord, '_id'>;

/** Another account has the e-mail address: the store keeps addresses unique, also against two nodes creating one at once. */
export class EmailTakenError extends Error {
  override readonly name = 'EmailTakenError';
}

export interface AccountStore {
  /** Throws EmailTakenError when another account has the address. */
  insert(account: NewAccount): Promise<AccountRecord>;
  /** Every account, oldest first. */
  list(): Promise<AccountRecord[]>;
  get(id: string): Promise<AccountRecord | null>;
  byEmail(email: string): Promise<AccountRecord | null>;
  /** Throws EmailTakenError when the change gives the account another account's address. */
  update(id: string, change: Partial<Omit<AccountRecord, '_id'>>): Promise<void>;
  remove(id: string): Promise<void>;
}

/** The accounts' storage destinations (customer uploads), one per account, credentials sealed in the record. */
export interface DestinationStore {
  /** The account's destination, or null. */
  get(accountId: string): Promise<DestinationRecord | null>;
  /** Stores the destination of the account `record._id`, replacing any it had. */
  put(record: DestinationRecord): Promise<void>;
  /** Removes the account's destination; false when it had none. */
  remove(accountId: string): Promise<boolean>;
}

export type NewKey = Omit<KeyRecord, '_id'>;

export interface KeyStore {
  insert(key: NewKey): Promise<KeyRecord>;
  get(id: string): Promise<KeyRecord | null>;
  /** Every record with this key hash: one, or none (two only in a damaged store, see ApiKeyService.authenticate). */
  byHash(hash: string): Promise<KeyRecord[]>;
  /** An account's keys, oldest first. */
  byAccount(accountId: string): Promise<KeyRecord[]>;
  update(id: string, change: Partial<Omit<KeyRecord, '_id' | 'account_id' | 'hash'>>): Promise<void>;
  revokeAll(accountId: string): Promise<void>;
  remove(id: string): Promise<void>;
}

/** Calls counted for one account on one UTC day (`YYYY-MM-DD`, in month `YYYY-MM`). */
export interface UsageDay {
  account_id: string;
  day: string;
  count: number;
}

/** What an admission finds: the calls already counted today and this month, before this one. */
export interface Admission {
  admitted: boolean;
  today: number;
  month: number;
}

export interface UsageStore {
  /**
   * Counts `calls` on `day` when the account's counts for that day and month plus `calls` stay
   * within its limits, as one step no other admission of the account interleaves with (a
   * transaction in PostgreSQL, so nodes of a cluster together admit exactly the limit).
   */
  admit(accountId: string, at: { day: string; month: string }, calls: number, limits: { daily: number; monthly: number }): Promise<Admission>;
  /** Adds `calls` (negative: a refund) to an account's day. */
  add(accountId: string, at: { day: string; month: string }, calls: number): Promise<void>;
  /** The account's days of a month. */
  month(accountId: string, month: string): Promise<UsageDay[]>;
  /** Days from `fromDay` on, of one account or all. */
  since(accountId: string | undefined, fromDay: string): Promise<UsageDay[]>;
}

/** Jobs ended in one UTC hour (`hour`: epoch ms of its start), kept as jobs end for the dashboard. */
export interface HourlyEnds {
  hour: number;
  completed: number;
  failed: number;
}

export interface StatsStore {
  /** Counts one job's end in the hour it ended. */
  countEnd(hour: number, status: EndStatus): Promise<void>;
  /** The hours from `fromHour` on that have ends. */
  hoursSince(fromHour: number): Promise<HourlyEnds[]>;
  /** Forgets hours before `beforeHour`. */
  prune(beforeHour: number): Promise<void>;
}

export interface SettingsStore {
  /** What the admin saved, or null when nothing was. */
  load(): Promise<Partial<Settings> | null>;
  save(values: Partial<Settings>): Promise<void>;
}

export interface DeliveryStore {
  /** Stores a new delivery; false, storing nothing, when one with its id is stored already. */
  insert(doc: DeliveryDoc): Promise<boolean>;
  get(id: string): Promise<DeliveryDoc | null>;
  /** Deliveries waiting for an attempt. */
  pending(): Promise<DeliveryDoc[]>;
  /** Newest first (created_at, then id, descending). */
  list(filter: { job_id?: string; limit: number }): Promise<DeliveryDoc[]>;
  /** Appends an attempt and sets the state it leads to, in one write; null when there is no such delivery. */
  recordAttempt(
    id: string,
    attempt: AttemptRecord,
    next: Pick<DeliveryDoc, 'status' | 'next_attempt_at' | 'completed_at' | 'scheduled_attempts'>,
  ): Promise<DeliveryDoc | null>;
  countByStatus(): Promise<Record<DeliveryStatus, number>>;
  /**
   * Cluster mode: reserves a pending delivery for one attempt by `node` until `until`; false when
   * it is not pending or another node's reservation has not run out by `now`.
   */
  reserve(id: string, node: string, now: number, until: number): Promise<boolean>;
  /** Cluster mode: up to `limit` pending deliveries due by `now` that no live reservation holds. */
  due(now: number, limit: number): Promise<DeliveryDoc[]>;
  /** Removes finished deliveries created before `cutoff`; returns how many. */
  removeFinishedBefore(cutoff: number): Promise<number>;
}

/** Values every node of a cluster must share (the admin token, the key sealing job secrets). */
export interface SharedValues {
  /** The stored value of `name`; `value` is stored first when there is none yet. */
  getOrSet(name: string, value: string): Promise<string>;
}

/**
 * Monitors (scheduled captures) and their checks, newest check first. A monitor's sealed
 * secrets (its capture's headers, cookies, http_auth and html: up to 5 MB) are kept apart from
 * its record, which is written again at every claim and change (NeDB appends each version;
 * PostgreSQL keeps row versions until vacuumed): a change of the record never copies them, and
 * replacing or removing them leaves no copy behind. NeDB: one file per monitor in
 * `<data>/monitor-secrets/` (never archived by `backup`); PostgreSQL: the monitor_secrets table.
 */
export interface MonitorStore {
  /**
   * Stores a new monitor and its sealed secrets (null: it has none), unless its account has
   * `max` monitors already: then it stores nothing and returns false. One account's inserts take
   * turns (in PostgreSQL across nodes, under the account's advisory lock), so the bound holds exactly.
   */
  insert(monitor: MonitorRecord, secrets: string | null, max: number): Promise<boolean>;
  get(id: string): Promise<MonitorRecord | null>;
  /** An account's monitors, oldest first. */
  list(accountId: string): Promise<MonitorRecord[]>;
  /**
   * Sets fields, and when `secrets` is given replaces the monitor's sealed secrets with it (null
   * erases them); the monitor as it is after, or null when there is none.
   */
  update(id: string, change: Partial<Omit<MonitorRecord, '_id' | 'account_id'>>, secrets?: string | null): Promise<MonitorRecord | null>;
  /** The monitor's sealed secrets, or null when none are kept (it has none, or they were not restored from a backup). */
  secrets(id: string): Promise<string | null>;
  /** Removes the monitor, its secrets and its checks; returns the checks removed (their diff pictures go too). */
  remove(id: string): Promise<CheckRecord[]>;
  /** Up to `limit` monitors not paused whose next occurrence is due by `now`, earliest first. */
  due(now: number, limit: number): Promise<MonitorRecord[]>;
  /**
   * Moves a monitor's next occurrence from `expected` to `next`, only if it is still `expected`:
   * of the nodes (or restarts) claiming one occurrence, exactly one gets true.
   */
  claim(id: string, expected: number, next: number): Promise<boolean>;
  insertCheck(check: CheckRecord): Promise<void>;
  getCheck(id: string): Promise<CheckRecord | null>;
  /** Sets a check's fields only while its status is `status`; the check after, or null when it was not. */
  updateCheck(id: string, status: CheckRecord['status'], change: Partial<Omit<CheckRecord, '_id' | 'monitor_id'>>): Promise<CheckRecord | null>;
  /** A monitor's checks, newest first (at, then id), after an optional cursor. */
  checks(monitorId: string, filter: { before?: { at: number; id: string }; limit: number }): Promise<CheckRecord[]>;
  /** The newest completed check of a monitor on this device older than `before` (at, then id). */
  lastCompleted(monitorId: string, device: string, before: { at: number; id: string }): Promise<CheckRecord | null>;
  /** Checks still `pending` (their job running, or their comparison left by a stop), oldest first. */
  pendingChecks(limit: number): Promise<CheckRecord[]>;
  /** Up to `limit` checks made before `cutoff` that still name a diff picture (the retention sweep), oldest first. */
  diffsBefore(cutoff: number, limit: number): Promise<CheckRecord[]>;
  /** Removes up to `limit` checks made before `cutoff` that are not pending (the history period's purge), oldest first; returns them. */
  removeChecksBefore(cutoff: number, limit: number): Promise<CheckRecord[]>;
}

/**
 * Saved logins. A login's user name, password and session are one sealed value kept apart from
 * its record (NeDB: one file per login in `<data>/login-secrets/`, never archived by `backup`;
 * PostgreSQL: the login_secrets table), replaced whole when the session changes and erased
 * with the login, so no older copy of a session outlives it.
 */
export interface LoginStore {
  /** Stores a new login with its sealed secrets. */
  insert(login: LoginRecord, secrets: string): Promise<void>;
  get(id: string): Promise<LoginRecord | null>;
  /** An account's logins, oldest first. */
  list(accountId: string): Promise<LoginRecord[]>;
  /** Sets fields, and when `secrets` is given replaces the sealed secrets with it; the login after, or null when there is none. */
  update(id: string, change: Partial<Omit<LoginRecord, '_id' | 'account_id'>>, secrets?: string): Promise<LoginRecord | null>;
  /** The login's sealed secrets, or null when none are kept (a data directory restored from a backup). */
  secrets(id: string): Promise<string | null>;
  /** Removes the login and erases its secrets; false when there was none. */
  remove(id: string): Promise<boolean>;
  /**
   * Takes the sign-in of the login's next session for `claim.by` until `claim.until`, in one
   * atomic step across the nodes of a cluster: true when the login still keeps session
   * `sessionVersion`, its credentials were not refused (state `failed`), and no sign-in of another holder holds it past `now` (one of `claim.by`'s
   * own is taken over: its process holds the login's lock); false otherwise (or no login).
   * The sign-in's end (update) sets `signing_in` back to null.
   */
  claimSignIn(id: string, sessionVersion: number, claim: { by: string; until: number }, now: number): Promise<boolean>;
}

/**
 * The batches (POST /v1/batches) and their sealed items. A batch's record changes at each job it
 * feeds and each end it counts, so the items (up to the request body's size) are kept apart and
 * written once; they are erased when the batch ends. Feeding and counting are single atomic
 * steps, so two nodes of a cluster counting ends of one batch lose none.
 */
export interface BatchStore {
  /** Stores a new batch and its sealed items. */
  insert(batch: BatchRecord, sealedItems: string): Promise<void>;
  get(id: string): Promise<BatchRecord | null>;
  /** The batch's sealed items, or null once it has ended (or when there is no such batch). */
  items(id: string): Promise<string | null>;
  /** Appends fed jobs to the batch's `jobs`; the batch after, or null when there is none. */
  addJobs(id: string, jobIds: readonly string[]): Promise<BatchRecord | null>;
  /** Counts one of its jobs' end; the batch after, or null when there is none. */
  countEnd(id: string, status: 'completed' | 'failed'): Promise<BatchRecord | null>;
  /**
   * Ends a running batch (`completed` or `cancelled`, at `at`) and erases its items; the batch
   * after, or null when it was not running (another node or request ended it first).
   */
  end(id: string, status: 'completed' | 'cancelled', at: number): Promise<BatchRecord | null>;
  /** Batches still running, oldest first (fed again at a start). */
  running(): Promise<BatchRecord[]>;
  /** The newest `limit` batches of every account (created_at, then id, descending), for the control panel. */
  recent(limit: number): Promise<BatchRecord[]>;
  /** Removes the batches that ended before `cutoff` (the history period's purge); returns how many. Running ones stay. */
  removeEndedBefore(cutoff: number): Promise<number>;
}

/**
 * What POST /v1/screenshot answered each Idempotency-Key of an account, so that a retry gets the
 * same answer. A key is claimed by the request in flight, then holds its answer until it expires.
 */
export interface IdempotencyStore {
  /**
   * Stores `record` (a claim, without an answer) unless a live entry has its id: one with an
   * answer not yet expired, or a claim still held at `now`. Returns null when it stored the
   * record, else that live entry. Of two claims at once (in PostgreSQL across nodes), one stores.
   */
  claim(record: IdempotencyRecord, now: number): Promise<IdempotencyRecord | null>;
  /** Keeps `answer` for the entry the claim `claim` holds, until `until`; nothing if the claim was lost. */
  answer(id: string, claim: string, answer: KeptAnswer, until: number): Promise<void>;
  /** Forgets the entry the claim `claim` holds (its request failed: a retry is a new request). */
  release(id: string, claim: string): Promise<void>;
  /** Removes the entries expired at `now` (answers and claims alike); returns how many. */
  removeExpired(now: number): Promise<number>;
}

/** Every store of one backend. */
export interface Stores {
  /** `nedb` (files in the data directory) or `postgres`. */
  readonly backend: 'nedb' | 'postgres';
  accounts: AccountStore;
  keys: KeyStore;
  jobs: JobStore;
  jobSecrets: JobSecretStore;
  usage: UsageStore;
  stats: StatsStore;
  settings: SettingsStore;
  deliveries: DeliveryStore;
  monitors: MonitorStore;
  logins: LoginStore;
  destinations: DestinationStore;
  shared: SharedValues;
  idempotency: IdempotencyStore;
  batches: BatchStore;
  /** Each part of the store (NeDB: its files in the data directory; PostgreSQL: the connection): `ok`, or why it cannot be used. */
  health(): Promise<Record<string, string>>;
  /** Folds what removals left behind (NeDB's append-only files); cheap where there is nothing to fold. */
  compact(): Promise<void>;
  /** What the start left out of the job store as past the history period but has still to remove from disk (NeDB). */
  leftOut?: LeftOutHistory;
  close(): Promise<void>;
}

/**
 * Jobs the start left out of the job store (past the history period) whose files and stored
 * lines are still on disk: the retention sweep drops them first, in the background, so a start
 * costs only the reading.
 */
export interface LeftOutHistory {
  /** Jobs left out and not yet removed from disk. */
  pending(): number;
  /** Removes their files, then their lines; resolves to how many jobs it removed. */
  drop(): Promise<number>;
}
