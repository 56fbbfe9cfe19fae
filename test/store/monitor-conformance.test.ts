import { beforeEach, expect, it } from 'vitest';

import type { CheckRecord, MonitorRecord } from '../../server/store/records/monitor-record.js';
import type { Stores } from '../../server/store/stores.js';
import { describeOnEachStore } from '../helpers/store-backends.js';

// The monitor store, one suite over both backends (as test/store/conformance.test.ts for the others).

const T0 = Date.UTC(2026, 2, 10, 12);
let n = 0;

function monitor(fields: Partial<MonitorRecord> = {}): MonitorRecord {
  n++;
  return {
    _id: `mon_${String(n).padStart(24, '0')}`,
    account_id: 'acc1',
    key_id: 'key1',
    name: `m${n}`,
    request: { url: 'https://example.com/', full_page: true },
    secret_fields: [],
    schedule: { every_minutes: 5 },
    threshold: 0.001,
    mask_selectors: ['#clock'],
    callback_url: null,
    paused: false,
    baseline: 'previous',
    pinned_job_id: null,
    next_run_at: T0 + n * 1000,
    failing: false,
    base_url: 'http://127.0.0.1:8080',
    created_at: T0 + n,
    updated_at: T0 + n,
    ...fields,
  };
}

function check(monitorId: string, at: number, fields: Partial<CheckRecord> = {}): CheckRecord {
  n++;
  const id = `job_${String(n).padStart(24, '0')}`;
  return {
    _id: id,
    monitor_id: monitorId,
    account_id: 'acc1',
    job_id: id,
    device: 'desktop',
    at,
    status: 'completed',
    changed: false,
    difference: 0,
    baseline_job_id: null,
    image_file: `${id}.png`,
    diff_file: null,
    error: null,
    occurrence: null,
    ...fields,
  };
}

describeOnEachStore('the $name monitor store', (store) => {
  const { name, open } = store;
  let stores: Stores;
  beforeEach(() => {
    stores = store.stores;
  });

  it("stores monitors, reads each back whole, lists an account's oldest first, and updates fields", async () => {
    const [a, b, c] = [monitor(), monitor({ account_id: 'acc2' }), monitor()];
    for (const m of [c, a, b]) await stores.monitors.insert(m, null, 100);
    expect(await stores.monitors.get(a._id)).toEqual(a);
    expect((await stores.monitors.list('acc1')).map((m) => m._id)).toEqual([a._id, c._id]);
    expect(await stores.monitors.update(a._id, { paused: true, next_run_at: null })).toEqual({ ...a, paused: true, next_run_at: null });
    expect(await stores.monitors.update('mon_none', { paused: true })).toBeNull();
    expect(await stores.monitors.get('mon_none')).toBeNull();
  });

  it('finds the monitors due, earliest first, leaving out paused ones and those not due', async () => {
    const due1 = monitor({ next_run_at: T0 - 2000 });
    const due2 = monitor({ next_run_at: T0 - 1000 });
    const later = monitor({ next_run_at: T0 + 60_000 });
    const paused = monitor({ next_run_at: null, paused: true });
    for (const m of [due2, later, paused, due1]) await stores.monitors.insert(m, null, 100);
    expect((await stores.monitors.due(T0, 10)).map((m) => m._id)).toEqual([due1._id, due2._id]);
    expect((await stores.monitors.due(T0, 1)).map((m) => m._id)).toEqual([due1._id]);
  });

  it('gives an occurrence to one of several claims at once (PostgreSQL: also across two nodes)', async () => {
    const m = monitor({ next_run_at: T0 });
    await stores.monitors.insert(m, null, 100);
    // NeDB has one process per data directory (its lock); PostgreSQL is shared by the nodes of a cluster.
    const second = name === 'postgres' ? await open() : stores;
    const claims = await Promise.all([stores, second, stores, second].map((s) => s.monitors.claim(m._id, T0, T0 + 300_000)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect((await stores.monitors.get(m._id))?.next_run_at).toBe(T0 + 300_000);
    expect(await stores.monitors.claim(m._id, T0, T0 + 600_000)).toBe(false);
  });

  it('lists checks newest first with a cursor, finds the last completed one of a device before a check, and the pending ones', async () => {
    const m = monitor();
    await stores.monitors.insert(m, null, 100);
    const c1 = check(m._id, T0);
    const c2 = check(m._id, T0 + 1000, { status: 'failed', changed: null, difference: null });
    const c3 = check(m._id, T0 + 2000, { device: 'mobile' });
    const c4 = check(m._id, T0 + 3000, { status: 'pending', changed: null, difference: null });
    const elsewhere = check(monitor()._id, T0 + 500);
    for (const c of [c3, c1, elsewhere, c4, c2]) await stores.monitors.insertCheck(c);
    expect(await stores.monitors.getCheck(c1._id)).toEqual(c1);
    const ids = (cs: CheckRecord[]) => cs.map((c) => c._id);
    expect(ids(await stores.monitors.checks(m._id, { limit: 10 }))).toEqual([c4._id, c3._id, c2._id, c1._id]);
    expect(ids(await stores.monitors.checks(m._id, { limit: 2, before: { at: c3.at, id: c3._id } }))).toEqual([c2._id, c1._id]);
    expect((await stores.monitors.lastCompleted(m._id, 'desktop', { at: c4.at, id: c4._id }))?._id).toBe(c1._id);
    expect((await stores.monitors.lastCompleted(m._id, 'mobile', { at: c4.at, id: c4._id }))?._id).toBe(c3._id);
    expect(await stores.monitors.lastCompleted(m._id, 'desktop', { at: c1.at, id: c1._id })).toBeNull();
    expect(ids(await stores.monitors.pendingChecks(10))).toEqual([c4._id]);
  });

  it('finds the checks made before a time that still name a diff picture, oldest first', async () => {
    const m = monitor();
    const old = check(m._id, T0, { diff_file: 'a.diff.png', changed: true, difference: 0.5 });
    const older = check(m._id, T0 - 1000, { diff_file: 'b.diff.png', changed: true, difference: 0.5 });
    const without = check(m._id, T0 - 500);
    const recent = check(m._id, T0 + 10_000, { diff_file: 'c.diff.png', changed: true, difference: 0.5 });
    for (const c of [old, without, recent, older]) await stores.monitors.insertCheck(c);
    expect((await stores.monitors.diffsBefore(T0 + 1, 10)).map((c) => c._id)).toEqual([older._id, old._id]);
    expect((await stores.monitors.diffsBefore(T0 + 1, 1)).map((c) => c._id)).toEqual([older._id]);
    await stores.monitors.updateCheck(older._id, 'completed', { diff_file: null });
    expect((await stores.monitors.diffsBefore(T0 + 1, 10)).map((c) => c._id)).toEqual([old._id]);
  });

  it('settles a check only from the status it expects, once', async () => {
    const m = monitor();
    const c = check(m._id, T0, { status: 'pending', changed: null, difference: null });
    await stores.monitors.insertCheck(c);
    const settled = await stores.monitors.updateCheck(c._id, 'pending', { status: 'completed', changed: true, difference: 0.5 });
    expect(settled).toEqual({ ...c, status: 'completed', changed: true, difference: 0.5 });
    expect(await stores.monitors.updateCheck(c._id, 'pending', { status: 'failed' })).toBeNull();
    expect((await stores.monitors.getCheck(c._id))?.status).toBe('completed');
  });

  it('removes a monitor with its checks and returns those checks', async () => {
    const m = monitor();
    const kept = monitor();
    await stores.monitors.insert(m, null, 100);
    await stores.monitors.insert(kept, null, 100);
    const mine = [check(m._id, T0), check(m._id, T0 + 1)];
    const theirs = check(kept._id, T0);
    for (const c of [...mine, theirs]) await stores.monitors.insertCheck(c);
    const removed = await stores.monitors.remove(m._id);
    expect(removed.map((c) => c._id).sort()).toEqual(mine.map((c) => c._id).sort());
    expect(await stores.monitors.get(m._id)).toBeNull();
    expect(await stores.monitors.checks(m._id, { limit: 10 })).toEqual([]);
    expect(await stores.monitors.getCheck(theirs._id)).toEqual(theirs);
  });

  it("keeps a monitor's sealed secrets apart from its record, replaces them whole, and erases them with the monitor", async () => {
    const m = monitor({ secret_fields: ['cookies'] });
    await stores.monitors.insert(m, 'v1.sealed-first', 100);
    expect(await stores.monitors.get(m._id)).toEqual(m);
    expect(await stores.monitors.secrets(m._id)).toBe('v1.sealed-first');
    // A change of other fields keeps them; one that gives secrets replaces them; null erases them.
    expect(await stores.monitors.update(m._id, { paused: true })).toEqual({ ...m, paused: true });
    expect(await stores.monitors.secrets(m._id)).toBe('v1.sealed-first');
    await stores.monitors.update(m._id, { secret_fields: ['html'] }, 'v1.sealed-second');
    expect(await stores.monitors.secrets(m._id)).toBe('v1.sealed-second');
    await stores.monitors.update(m._id, { secret_fields: [] }, null);
    expect(await stores.monitors.secrets(m._id)).toBeNull();
    await stores.monitors.update(m._id, { secret_fields: ['headers'] }, 'v1.sealed-third');
    expect(await stores.monitors.update('mon_none', {}, 'v1.sealed-nobody')).toBeNull();
    expect(await stores.monitors.secrets('mon_none')).toBeNull();
    await stores.monitors.remove(m._id);
    expect(await stores.monitors.secrets(m._id)).toBeNull();
  });

  it("stores an account's monitors up to the most it may have, also from many inserts at once (PostgreSQL: across two nodes)", async () => {
    const second = name === 'postgres' ? await open() : stores;
    const inserted = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? second : stores).monitors.insert(monitor({ account_id: 'capped' }), null, 3)));
    expect(inserted.filter(Boolean)).toHaveLength(3);
    expect(await stores.monitors.list('capped')).toHaveLength(3);
    expect(await stores.monitors.insert(monitor({ account_id: 'another' }), null, 3)).toBe(true);
  });

  it('removes the checks made before a time, oldest first, leaving pending ones and later ones', async () => {
    const m = monitor();
    const oldest = check(m._id, T0 - 2000);
    const old = check(m._id, T0 - 1000, { status: 'skipped', job_id: null });
    const waiting = check(m._id, T0 - 1500, { status: 'pending', changed: null, difference: null });
    const recent = check(m._id, T0);
    for (const c of [recent, old, waiting, oldest]) await stores.monitors.insertCheck(c);
    expect((await stores.monitors.removeChecksBefore(T0, 1)).map((c) => c._id)).toEqual([oldest._id]);
    expect((await stores.monitors.removeChecksBefore(T0, 10)).map((c) => c._id)).toEqual([old._id]);
    expect((await stores.monitors.checks(m._id, { limit: 10 })).map((c) => c._id)).toEqual([recent._id, waiting._id]);
  });

  it('keeps monitors and checks across a reopening', async () => {
    const m = monitor();
    const c = check(m._id, T0);
    await stores.monitors.insert(m, null, 100);
    await stores.monitors.insertCheck(c);
    await stores.close();
    const again = await open();
    expect(await again.monitors.get(m._id)).toEqual(m);
    expect(await again.monitors.getCheck(c._id)).toEqual(c);
  });
});
