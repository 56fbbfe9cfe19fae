import crypto from 'node:crypto';

import type { Logger } from '../logger.js';
import type { KeptAnswer } from '../store/records/idempotency-record.js';
import type { IdempotencyStore } from '../store/stores.js';
import type { Clock } from '../time.js';

/** How long an answer is kept for the retries of its request: a day. */
export const IDEMPOTENCY_KEEP_MS = 24 * 3_600_000;
/**
 * How long a request in flight holds its key. A POST is answered in well under this; a request
 * cut off by a stop or a crash leaves a claim that then lapses, and a retry runs it anew.
 */
const CLAIM_MS = 120_000;
/** Expired entries are removed on the requests' way, at most this often. */
const PURGE_EVERY_MS = 60_000;

/** A request with this Idempotency-Key is still being answered. */
export class IdempotencyKeyInUseError extends Error {
  override readonly name = 'IdempotencyKeyInUseError';
  readonly retryAfterSeconds = 1;
  constructor() {
    super('A request with this Idempotency-Key is still being answered; retry it once that one has its answer');
  }
}

/** This Idempotency-Key was used in the last day for a request with another body. */
export class IdempotencyKeyReusedError extends Error {
  override readonly name = 'IdempotencyKeyReusedError';
  constructor() {
    super('This Idempotency-Key was used in the last 24 hours with a different request body; use a new key for a new request');
  }
}

/** What one run of a request gives: its answer, and whether to keep it for retries. */
export interface IdempotentOutcome {
  answer: KeptAnswer;
  /** False when the request changed nothing a retry could repeat (its answer is then made anew). */
  keep: boolean;
}

/**
 * The fingerprint of a request body: SHA-256 of its JSON with every object's keys in one
 * order, so a retry that spells the same body otherwise (key order, spaces) is the same request.
 */
export function requestFingerprint(body: unknown): string {
  const text = JSON.stringify(body, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
  return crypto.createHash('sha256').update(text ?? '').digest('hex');
}

export interface IdempotentRequestsDeps {
  store: IdempotencyStore;
  clock: Clock;
  log: Logger;
}

/**
 * Requests made safe to retry with an Idempotency-Key (draft-ietf-httpapi-idempotency-key-header):
 * the first request with a key of an account runs and its answer is kept a day; a retry with
 * the same key and body gets that answer again without running; the same key with another body
 * is IdempotencyKeyReusedError, and while the first is still in flight IdempotencyKeyInUseError.
 * A request that failed, or changed nothing (`keep: false`), keeps nothing: its retry runs anew.
 */
export class IdempotentRequests {
  private nextPurge = 0;

  constructor(private readonly deps: IdempotentRequestsDeps) {}

  /**
   * Runs `run` for the account's `key` on `endpoint` unless a request with that key has run: the
   * answer, and whether it was kept from an earlier request (`replayed`).
   */
  async once(
    accountId: string,
    endpoint: string,
    key: string,
    fingerprint: string,
    run: () => Promise<IdempotentOutcome>,
  ): Promise<{ answer: KeptAnswer; replayed: boolean }> {
    const { store, clock } = this.deps;
    const now = clock.now();
    this.purge(now);
    const id = crypto.createHash('sha256').update(`${accountId}\n${endpoint}\n${key}`).digest('hex');
    const claim = crypto.randomUUID();
    const live = await store.claim({ _id: id, account_id: accountId, fingerprint, claim, until: now + CLAIM_MS, created_at: now }, now);
    if (live) {
      if (live.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
      if (!live.answer) throw new IdempotencyKeyInUseError();
      return { answer: live.answer, replayed: true };
    }
    let outcome: IdempotentOutcome;
    try {
      outcome = await run();
    } catch (err) {
      await store.release(id, claim).catch(() => undefined);
      throw err;
    }
    // The request has had its effect: an answer that could not be kept is still the answer.
    const kept = outcome.keep ? store.answer(id, claim, outcome.answer, clock.now() + IDEMPOTENCY_KEEP_MS) : store.release(id, claim);
    await kept.catch((err: unknown) =>
      this.deps.log.warn({ component: 'idempotency', err }, 'an Idempotency-Key answer could not be stored; a retry within 2 minutes is refused, later it runs again'),
    );
    return { answer: outcome.answer, replayed: false };
  }

  private purge(now: number): void {
    if (now < this.nextPurge) return;
    this.nextPurge = now + PURGE_EVERY_MS;
    this.deps.store.removeExpired(now).catch((err: unknown) => this.deps.log.warn({ component: 'idempotency', err }, 'expired Idempotency-Key entries could not be removed'));
  }
}
