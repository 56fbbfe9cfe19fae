import fs from 'node:fs/promises';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { openPgStores } from '../../server/store/pg/pg-stores.js';
import type { IdempotencyRecord } from '../../server/store/records/idempotency-record.js';
import type { Stores } from '../../server/store/stores.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';

// The idempotency store, one suite over both backends (as test/store/conformance.test.ts for the others).

interface Backend {
  /** A fresh, empty place; `open` may be called again on it (a second node, or a restart). */
  place(): Promise<{ open(): Promise<Stores> }>;
  stop(): Promise<void>;
}

async function nedb(): Promise<Backend> {
  const dirs: string[] = [];
  return {
    async place() {
      const dir = await tempDir('sa-idempotency-');
      dirs.push(dir);
      return { open: () => openNedbStores(dir, silentLogger) };
    },
    stop: async () => void (await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })))),
  };
}

async function postgres(): Promise<Backend> {
  const server = await startPostgres();
  return {
    async place() {
      const url = await server.createDatabase();
      return { open: () => openPgStores(url, silentLogger) };
    },
    stop: () => server.stop(),
  };
}

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

describe.each([
  // NeDB has one process per data directory (a lock file); PostgreSQL is shared by the nodes of a cluster.
  { name: 'nedb', start: nedb, nodes: 1 },
  { name: 'postgres', start: postgres, nodes: 2 },
])('the $name idempotency store', ({ start, nodes }) => {
  let backend: Backend;
  let place: { open(): Promise<Stores> };
  let stores: Stores;
  const opened: Stores[] = [];
  const open = async () => {
    const s = await place.open();
    opened.push(s);
    return s;
  };

  beforeAll(async () => {
    backend = await start();
  });
  afterAll(async () => {
    await backend?.stop();
  });
  beforeEach(async () => {
    place = await backend.place();
    stores = await open();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
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
