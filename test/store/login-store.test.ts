// Saved logins on both backends: kept over a reopening, their sealed secrets replaced whole and
// erased with the login; and brought along when a NeDB directory is imported into PostgreSQL.
import fs from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { importDataDir } from '../../server/store/pg/pg-import.js';
import { openPgStores } from '../../server/store/pg/pg-stores.js';
import type { LoginRecord } from '../../server/store/records/login-record.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { describeOnEachStore } from '../helpers/store-backends.js';
import { tempDir } from '../helpers/temp-dir.js';
import { newAccount } from './conformance-records.js';

const login = (id: string, accountId: string, createdAt: number): LoginRecord => ({
  _id: id,
  account_id: accountId,
  name: id,
  type: 'form',
  site: 'http://127.0.0.1:8080',
  login_url: 'http://127.0.0.1:8080/login',
  state: 'new',
  signed_in_at: null,
  last_error: null,
  created_at: createdAt,
  session_version: 0,
});

describeOnEachStore('saved logins on $name', (store) => {
  it("lists an account's logins oldest first, and keeps them and their secrets over a reopening", async () => {
    await store.stores.logins.insert(login('login_b', 'acct_1', 2), 'v1.sealed-b');
    await store.stores.logins.insert(login('login_a', 'acct_1', 1), 'v1.sealed-a');
    await store.stores.logins.insert(login('login_c', 'acct_2', 3), 'v1.sealed-c');
    const again = await store.open();
    expect((await again.logins.list('acct_1')).map((l) => l._id)).toEqual(['login_a', 'login_b']);
    expect(await again.logins.get('login_c')).toEqual(login('login_c', 'acct_2', 3));
    expect(await again.logins.secrets('login_a')).toBe('v1.sealed-a');
  });

  it('replaces the secrets with a change that gives them, and keeps them with one that does not', async () => {
    await store.stores.logins.insert(login('login_x', 'acct_1', 1), 'v1.first');
    const signedIn = await store.stores.logins.update('login_x', { state: 'signed_in', signed_in_at: 5, session_version: 1 }, 'v1.second');
    expect(signedIn).toMatchObject({ state: 'signed_in', signed_in_at: 5, session_version: 1 });
    expect(await store.stores.logins.secrets('login_x')).toBe('v1.second');
    await store.stores.logins.update('login_x', { name: 'renamed' });
    expect(await store.stores.logins.secrets('login_x')).toBe('v1.second');
    expect(await store.stores.logins.update('login_none', { name: 'n' }, 'v1.x')).toBeNull();
  });

  it('gives the sign-in of the next session to one holder of many asking at once', async () => {
    await store.stores.logins.insert(login('login_race', 'acct_1', 1), 'v1.s');
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => store.stores.logins.claimSignIn('login_race', 0, { by: `node-${i}`, until: 2_000 }, 1_000)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    const holder = (await store.stores.logins.get('login_race'))!.signing_in!.by;
    expect(await store.stores.logins.claimSignIn('login_race', 0, { by: 'late', until: 3_000 }, 1_500)).toBe(false);
    // Its own holder takes it over (its process holds the login's lock); a lapsed one is anyone's.
    expect(await store.stores.logins.claimSignIn('login_race', 0, { by: holder, until: 2_500 }, 1_500)).toBe(true);
    expect(await store.stores.logins.claimSignIn('login_race', 0, { by: 'late', until: 4_000 }, 2_501)).toBe(true);
  });

  it('gives no sign-in for a session already replaced or refused credentials, and frees it when the sign-in ends', async () => {
    await store.stores.logins.insert(login('login_end', 'acct_1', 1), 'v1.s');
    expect(await store.stores.logins.claimSignIn('login_end', 0, { by: 'a', until: 9_000 }, 1_000)).toBe(true);
    await store.stores.logins.update('login_end', { state: 'signed_in', session_version: 1, signing_in: null }, 'v1.t');
    expect(await store.stores.logins.claimSignIn('login_end', 0, { by: 'b', until: 9_000 }, 1_000)).toBe(false);
    expect(await store.stores.logins.claimSignIn('login_end', 1, { by: 'b', until: 9_000 }, 1_000)).toBe(true);
    expect(await store.stores.logins.claimSignIn('login_none', 0, { by: 'b', until: 9_000 }, 1_000)).toBe(false);
    await store.stores.logins.update('login_end', { state: 'failed', signing_in: null });
    expect(await store.stores.logins.claimSignIn('login_end', 1, { by: 'c', until: 9_000 }, 1_000)).toBe(false);
  });

  it('removes a login with its secrets', async () => {
    await store.stores.logins.insert(login('login_y', 'acct_1', 1), 'v1.gone');
    expect(await store.stores.logins.remove('login_y')).toBe(true);
    expect(await store.stores.logins.get('login_y')).toBeNull();
    expect(await store.stores.logins.secrets('login_y')).toBeNull();
    expect(await store.stores.logins.remove('login_y')).toBe(false);
  });
});

describe('a NeDB data directory imported into PostgreSQL', () => {
  let postgres: TestPostgres;
  beforeAll(async () => {
    postgres = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await postgres?.stop();
  });

  it('brings its saved logins and their sealed secrets along', async () => {
    const dir = await tempDir('sa-login-import-');
    const nedb = await openNedbStores(dir, silentLogger);
    const { _id: accountId } = await nedb.accounts.insert(newAccount());
    await nedb.logins.insert(login('login_imported', accountId, 1), 'v1.sealed-imported');
    await nedb.close();
    const url = await postgres.createDatabase();
    await importDataDir(dir, url, silentLogger);
    const pg = await openPgStores(url, silentLogger);
    try {
      expect((await pg.logins.list(accountId)).map((l) => l._id)).toEqual(['login_imported']);
      expect(await pg.logins.secrets('login_imported')).toBe('v1.sealed-imported');
    } finally {
      await pg.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
