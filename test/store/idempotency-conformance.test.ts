import { beforeEach, expect, it } from 'vitest';

import type { IdempotencyRecord } from '../../server/store/records/idempotency-record.js';
import type { Stores } from '../../server/store/stores.js';
import { describeOnEachStore } from '../helpers/store-backends.js';

// The idempotency store, one suite over both backends (as test/store/conformance.test.ts for the others).

const T0 = Date.UTC(2026, 2, 10, 12);
const MINUTE = 60_000;
const DAY = 86_400_000;

/** A claim of key `id` by `claim`, held until T0 + 2 minutes. */
const claimOf = (id: string, claim = 'c1', fields: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
  _id: id,
  account_id: 'acc1',
  fingerprint: 'f1',
  claim,
  until: T0 + 2 * MINUTE,
  created_at: T0,
  ...fields,
});

const answer = { status: 201, body: { job_id: 'job_1', jobs: [{ job_id: 'job_1', device: 'desktop' }] } };

describeOnEachStore('the $name idempotency store', (store) => {
  const { name, open } = store;
  // NeDB has one process per data directory (a lock file); PostgreSQL is shared by the nodes of a cluster.
  const nodes = name === 'postgres' ? 2 : 1;
  let stores: Stores;
  beforeEach(() => {
    stores = store.stores;
  });

  it('stores a claim of a new key, and answers a second claim with the first, storing nothing', async () => {
    expect(await stores.idempotency.claim(claimOf('k1'), T0)).toBeNull();
    expect(await stores.idempotency.claim(claimOf('k1', 'c2', { fingerprint: 'f2' }), T0 + 1)).toEqual(claimOf('k1'));
  });

  it('keeps the answer until its time, then lets the key be claimed anew', async () => {
    await stores.idempotency.claim(claimOf('k1'), T0);
    await stores.idempotency.answer('k1', 'c1', answer, T0 + DAY);
    expect(await stores.idempotency.claim(claimOf('k1', 'c2'), T0 + DAY - 1)).toEqual({ ...claimOf('k1'), answer, until: T0 + DAY });
    expect(await stores.idempotency.claim(claimOf('k1', 'c3', { until: T0 + DAY + 2 * MINUTE }), T0 + DAY)).toBeNull();
    expect(await stores.idempotency.claim(claimOf('k1', 'c4'), T0 + DAY + 1)).toMatchObject({ claim: 'c3' });
  });

  it('lets a claim that lapsed be taken over, and then ignores the answer and release of its first holder', async () => {
    await stores.idempotency.claim(claimOf('k1', 'old'), T0);
    expect(await stores.idempotency.claim(claimOf('k1', 'new', { until: T0 + 5 * MINUTE }), T0 + 2 * MINUTE)).toBeNull();
    await stores.idempotency.answer('k1', 'old', answer, T0 + DAY);
    await stores.idempotency.release('k1', 'old');
    expect(await stores.idempotency.claim(claimOf('k1', 'third'), T0 + 3 * MINUTE)).toEqual(claimOf('k1', 'new', { until: T0 + 5 * MINUTE }));
  });

  it('forgets a key its holder releases, so the next claim stores', async () => {
    await stores.idempotency.claim(claimOf('k1'), T0);
    await stores.idempotency.release('k1', 'c1');
    expect(await stores.idempotency.claim(claimOf('k1', 'c2'), T0 + 1)).toBeNull();
  });

  it('removes the expired entries, answers and claims alike, and keeps the live ones', async () => {
    await stores.idempotency.claim(claimOf('lapsed'), T0);
    await stores.idempotency.claim(claimOf('answered'), T0);
    await stores.idempotency.answer('answered', 'c1', answer, T0 + DAY);
    await stores.idempotency.claim(claimOf('expired'), T0);
    await stores.idempotency.answer('expired', 'c1', answer, T0 + 3 * MINUTE);
    expect(await stores.idempotency.removeExpired(T0 + 3 * MINUTE)).toBe(2);
    expect(await stores.idempotency.claim(claimOf('answered', 'c2'), T0 + 3 * MINUTE)).toMatchObject({ answer });
    expect(await stores.idempotency.removeExpired(T0 + 3 * MINUTE)).toBe(0);
  });

  it('keeps answers over a restart', async () => {
    await stores.idempotency.claim(claimOf('k1'), T0);
    await stores.idempotency.answer('k1', 'c1', answer, T0 + DAY);
    await stores.close();
    const again = await open();
    expect(await again.idempotency.claim(claimOf('k1', 'c2'), T0 + 1)).toMatchObject({ claim: 'c1', answer });
  });

  it('gives a key to exactly one of many claims made at once, from every node', async () => {
    const other = nodes > 1 ? await open() : stores;
    const claims = Array.from({ length: 20 }, (_, i) => (i % 2 ? stores : other).idempotency.claim(claimOf('k1', `c${i}`), T0));
    const results = await Promise.all(claims);
    expect(results.filter((r) => r === null)).toHaveLength(1);
    const winner = `c${results.indexOf(null)}`;
    expect(results.filter((r) => r !== null).every((r) => r?.claim === winner)).toBe(true);
  });
});
