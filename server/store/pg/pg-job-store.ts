import type pg from 'pg';

import { fairTurns } from '../fair-turns.js';
import { END_STATUSES, type JobRecord, type JobStatus } from '../records/job-record.js';
import type { JobChange, JobListFilter, JobStore } from '../stores.js';
import { inTransaction, selectDoc, selectDocs, toJsonb } from './pg-pool.js';

/** A job's turn in the fair order; absent (a job queued before turns were kept) is 0. */
const TURN = `coalesce((doc->>'turn')::bigint, 0)`;

/**
 * The first key of the transaction-scoped advisory lock an account's enqueue takes; the
 * second is a hash of the account id. Accounts whose ids share a hash merely take turns.
 */
const SHARE_LOCK = 0x4a4f_4253; // 'JOBS'

const INSERT = `INSERT INTO jobs (id, doc) SELECT j->>'_id', j FROM jsonb_array_elements($1::jsonb) AS j`;

/** The jobs table: each job's record in `doc`, its queried fields as indexed columns. */
export class PgJobStore implements JobStore {
  constructor(private readonly pool: pg.Pool) {}

  async insert(jobs: readonly JobRecord[]): Promise<void> {
    if (jobs.length === 0) return;
    // One statement: the jobs of a request are stored together or not at all.
    await this.pool.query(INSERT, [toJsonb(jobs)]);
  }

  /**
   * One transaction holding the account's advisory lock: the nodes of a cluster count and
   * insert the account's jobs in turns, each seeing the jobs the one before it inserted.
   */
  enqueue(jobs: readonly JobRecord[], max: number): Promise<JobRecord[] | null> {
    const accountId = jobs[0]?.account_id ?? '';
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [SHARE_LOCK, accountId]);
      // Each written with the jobs_unfinished index's predicate: the queue is read, not the history.
      const { rows } = await client.query<{ own: number; last: string | null; running_max: string | null; waiting_min: string | null }>(
        `SELECT count(*) FILTER (WHERE account_id = $1)::int AS own,
                max(${TURN}) FILTER (WHERE account_id = $1) AS last,
                max(${TURN}) FILTER (WHERE status = 'processing') AS running_max,
                min(${TURN}) FILTER (WHERE status = 'pending') AS waiting_min
           FROM jobs WHERE status IN ('pending', 'processing')`,
        [accountId],
      );
      const queue = rows[0];
      if (queue.own + jobs.length > max) return null;
      const number = (value: string | null) => (value === null ? null : Number(value));
      const turns = fairTurns(jobs.length, { accountLast: number(queue.last), runningMax: number(queue.running_max), waitingMin: number(queue.waiting_min) });
      const queued = jobs.map((job, i) => ({ ...job, turn: turns[i] }));
      await client.query(INSERT, [toJsonb(queued)]);
      return queued;
    });
  }

  get(id: string): Promise<JobRecord | null> {
    return selectDoc(this.pool, 'SELECT doc FROM jobs WHERE id = $1', [id]);
  }

  byImage(imageFile: string): Promise<JobRecord | null> {
    return selectDoc(this.pool, 'SELECT doc FROM jobs WHERE image_file = $1 LIMIT 1', [imageFile]);
  }

  async update(id: string, change: JobChange, holder?: string): Promise<boolean> {
    const result =
      holder === undefined
        ? await this.pool.query('UPDATE jobs SET doc = doc || $2::jsonb WHERE id = $1', [id, toJsonb(change)])
        : await this.pool.query(`UPDATE jobs SET doc = doc || $2::jsonb WHERE id = $1 AND doc->>'lease_owner' = $3`, [id, toJsonb(change), holder]);
    return (result.rowCount ?? 0) > 0;
  }

  /**
   * One statement: the free jobs are locked in the fair order (lowest turn, then oldest) as
   * they are read, and rows another node's claim holds locked are skipped rather than waited
   * for, so concurrent claims split the queue between them and never hand out one job twice.
   */
  async claim(node: string, limit: number, now: number, until: number): Promise<JobRecord[]> {
    const { rows } = await this.pool.query<{ doc: JobRecord }>(
      `WITH free AS (
         SELECT id FROM jobs
          WHERE status IN ('pending', 'processing')
            AND (status = 'pending' OR (doc->>'lease_until')::bigint < $2)
          ORDER BY ${TURN}, created_at, id
          LIMIT $3
          FOR UPDATE SKIP LOCKED
       )
       UPDATE jobs SET doc = doc || jsonb_build_object('status', 'processing', 'lease_owner', $1::text, 'lease_until', $4::bigint)
         FROM free WHERE jobs.id = free.id
       RETURNING jobs.doc`,
      [node, now, limit, until],
    );
    return rows.map((r) => r.doc).sort((a, b) => a.created_at - b.created_at || (a._id < b._id ? -1 : 1));
  }

  async countAhead(job: Pick<JobRecord, '_id' | 'turn' | 'created_at'>): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs
        WHERE status IN ('pending', 'processing')
          AND (status = 'processing' OR (${TURN}, created_at, id) < ($1::bigint, $2::bigint, $3::text))`,
      [job.turn ?? 0, job.created_at, job._id],
    );
    return rows[0].n;
  }

  async renew(node: string, ids: readonly string[], until: number): Promise<string[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query<{ id: string }>(
      `UPDATE jobs SET doc = doc || jsonb_build_object('lease_until', $3::bigint)
        WHERE id = ANY($2::text[]) AND status = 'processing' AND doc->>'lease_owner' = $1
       RETURNING id`,
      [node, ids, until],
    );
    return rows.map((r) => r.id);
  }

  byCacheKey(cacheKey: string, limit: number): Promise<JobRecord[]> {
    return selectDocs(this.pool, 'SELECT doc FROM jobs WHERE cache_key = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [cacheKey, limit]);
  }

  list(filter: JobListFilter): Promise<JobRecord[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    const param = (value: unknown) => `$${values.push(value)}`;
    if (filter.status !== undefined) where.push(`status = ${param(filter.status)}`);
    if (filter.account_id !== undefined) where.push(`account_id = ${param(filter.account_id)}`);
    if (filter.before) where.push(`(created_at, id) < (${param(filter.before.created_at)}, ${param(filter.before.id)})`);
    const condition = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    return selectDocs(this.pool, `SELECT doc FROM jobs ${condition} ORDER BY created_at DESC, id DESC LIMIT ${param(filter.limit)}`, values);
  }

  unfinished(): Promise<JobRecord[]> {
    return selectDocs(this.pool, `SELECT doc FROM jobs WHERE status IN ('pending', 'processing') ORDER BY created_at, id`);
  }

  async count(filter: { account_id?: string; status?: readonly JobStatus[] } = {}): Promise<number> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.account_id !== undefined) where.push(`account_id = $${values.push(filter.account_id)}`);
    if (filter.status !== undefined) where.push(`status = ANY($${values.push(filter.status)}::text[])`);
    const condition = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*) AS n FROM jobs ${condition}`, values);
    return rows[0].n;
  }

  endedBefore(cutoff: number, limit: number): Promise<JobRecord[]> {
    return selectDocs(this.pool, 'SELECT doc FROM jobs WHERE created_at < $1 AND status = ANY($2::text[]) ORDER BY created_at, id LIMIT $3', [cutoff, END_STATUSES, limit]);
  }

  toExpire(cutoff: number): Promise<JobRecord[]> {
    // Written as the jobs_to_expire index's predicate, so the planner can use it.
    return selectDocs(this.pool, `SELECT doc FROM jobs WHERE NOT expired AND status IN ('completed', 'failed') AND completed_at < $1`, [cutoff]);
  }

  async remove(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await this.pool.query('DELETE FROM jobs WHERE id = ANY($1::text[])', [ids]);
    return result.rowCount ?? 0;
  }

  webhookDue(cutoff: number, limit: number): Promise<JobRecord[]> {
    // Written as the jobs_webhook_due index's predicate, so the planner can use it.
    return selectDocs(this.pool, `SELECT doc FROM jobs WHERE doc->>'webhook_due' = 'true' AND completed_at < $1 ORDER BY completed_at LIMIT $2`, [cutoff, limit]);
  }
}
