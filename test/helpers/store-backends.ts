import fs from 'node:fs/promises';

import { afterAll, afterEach, beforeAll, beforeEach, describe } from 'vitest';

import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { openPgStores } from '../../server/store/pg/pg-stores.js';
import type { Stores } from '../../server/store/stores.js';
import { startPostgres } from './postgres.js';
import { tempDir } from './temp-dir.js';

/** One case's data on one backend, as a store conformance suite sees it. */
export interface StoreCase {
  readonly name: 'nedb' | 'postgres';
  /** The Stores opened on the case's fresh, empty data before it. */
  readonly stores: Stores;
  /** PostgreSQL: the case's database URL (as the superuser). */
  readonly url: string | undefined;
  /** Opens the case's data once more (a second node, or a restart); closed after the case. */
  open(): Promise<Stores>;
}

/** Where a backend keeps one case's data: opened empty, and opened again on the same data. */
interface Place {
  open(): Promise<Stores>;
  url?: string;
}

interface Backend {
  place(): Promise<Place>;
  stop(): Promise<void>;
}

/** NeDB files in a fresh temporary directory per case. */
async function nedb(): Promise<Backend> {
  const dirs: string[] = [];
  return {
    async place() {
      const dir = await tempDir('sa-stores-');
      dirs.push(dir);
      return { open: () => openNedbStores(dir, silentLogger) };
    },
    stop: async () => void (await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })))),
  };
}

/** One PostgreSQL server for the file, a fresh database per case. */
async function postgres(): Promise<Backend> {
  const server = await startPostgres();
  return {
    async place() {
      const url = await server.createDatabase();
      return { url, open: () => openPgStores(url, silentLogger) };
    },
    stop: () => server.stop(),
  };
}

/**
 * Runs `body` as a describe block on NeDB and on PostgreSQL (`$name` in the title names the
 * backend): one backend for the block, fresh data and Stores per case, and every Stores a case
 * opened closed after it.
 */
export function describeOnEachStore(title: string, body: (store: StoreCase) => void): void {
  describe.each([
    { name: 'nedb' as const, start: nedb },
    { name: 'postgres' as const, start: postgres },
  ])(title, ({ name, start }) => {
    let backend: Backend;
    let place: Place;
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

    body({
      name,
      get stores() {
        return stores;
      },
      get url() {
        return place.url;
      },
      open,
    });
  });
}
