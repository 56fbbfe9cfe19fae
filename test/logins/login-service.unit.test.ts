// LoginService's sign-in across the nodes of a cluster, over one real NeDB login store shared by
// two services as two nodes share one database: one signs in, the other waits for its session.
import fs from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { StorageState } from '../../server/capture/capture-login.js';
import { SecretBox } from '../../server/crypto/secret-box.js';
import { silentLogger } from '../../server/logger.js';
import { LoginService } from '../../server/logins/login-service.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import type { Stores } from '../../server/store/stores.js';
import { systemClock } from '../../server/time.js';
import { tempDir } from '../helpers/temp-dir.js';

let dir: string;
let stores: Stores;
let nodeA: LoginService;
let nodeB: LoginService;
const SESSION: StorageState = { cookies: [{ name: 'sid', value: 'kept', domain: '127.0.0.1' }] };
const HOLD_MS = 60_000;

beforeAll(async () => {
  dir = await tempDir('login-service-');
  stores = await openNedbStores(dir, silentLogger);
  const deps = { store: stores.logins, secrets: SecretBox.forDataDir(dir), clock: systemClock, log: silentLogger };
  nodeA = new LoginService(deps);
  nodeB = new LoginService(deps);
});
afterAll(async () => {
  await stores?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const newFormLogin = async (name: string) =>
  (await nodeA.create('acct_1', { name, type: 'form', login_url: 'http://127.0.0.1:9/login', username: 'u', password: 'p' }))._id;
/** Settles within `ms`, or says it is still waiting. */
const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'waiting'> =>
  Promise.race([promise, new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), ms))]);

describe('a form login asked for by two nodes at once', () => {
  it('is signed in by one; the other waits and gets the session it kept', async () => {
    const id = await newFormLogin('together');
    const first = await nodeA.forCapture('acct_1', id, { holdMs: HOLD_MS });
    expect(first.login.signIn).toBeDefined();
    const second = nodeB.forCapture('acct_1', id, { holdMs: HOLD_MS });
    expect(await within(second, 600)).toBe('waiting');
    await first.login.signIn!.signedIn(SESSION);
    const got = await second;
    expect(got.login.signIn).toBeUndefined();
    expect(got.login.session).toEqual(SESSION);
    expect(got.version).toBe(first.version);
    got.done();
  });

  it('is signed in by the other once the first one ended without a word, at once', async () => {
    const id = await newFormLogin('ended');
    const first = await nodeA.forCapture('acct_1', id, { holdMs: HOLD_MS });
    const second = nodeB.forCapture('acct_1', id, { holdMs: HOLD_MS });
    expect(await within(second, 400)).toBe('waiting');
    first.done();
    const got = await within(second, 2_000);
    expect(got).not.toBe('waiting');
    expect((got as Awaited<typeof second>).login.signIn).toBeDefined();
    (got as Awaited<typeof second>).done();
  });

  it('is signed in by the other when the first node stopped, once its claim lapsed', async () => {
    const id = await newFormLogin('lapsed');
    // Node A takes the sign-in and is never heard of again (its process stopped).
    await nodeA.forCapture('acct_1', id, { holdMs: 700 });
    const got = await nodeB.forCapture('acct_1', id, { holdMs: HOLD_MS });
    expect(got.login.signIn).toBeDefined();
    got.done();
  });

  it("fails the waiting capture with the first one's refusal, and ends a wait with the job's signal", async () => {
    const id = await newFormLogin('refused');
    const first = await nodeA.forCapture('acct_1', id, { holdMs: HOLD_MS });
    const second = nodeB.forCapture('acct_1', id, { holdMs: HOLD_MS });
    await first.login.signIn!.failed('Wrong user name or password', true);
    await expect(second).rejects.toThrow(/not tried again.*Wrong user name or password/);

    const other = await newFormLogin('cancelled');
    const holder = await nodeA.forCapture('acct_1', other, { holdMs: HOLD_MS });
    const job = new AbortController();
    const waiting = nodeB.forCapture('acct_1', other, { holdMs: HOLD_MS, signal: job.signal });
    job.abort();
    await expect(waiting).rejects.toThrow(/job ended while another node was signing in/);
    holder.done();
  });
});
