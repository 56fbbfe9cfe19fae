import type { Logger } from '../logger.js';
import type { FileStore } from './file-store.js';
import { openNedbStores } from './nedb/nedb-stores.js';
import { openPgStores } from './pg/pg-stores.js';
import type { SettingsStore, Stores } from './stores.js';

const DAY_MS = 86_400_000;

/** The settings as opening the stores needs them: the history period, in days. */
export interface HistorySettings {
  get(): { readonly history_days: number };
}

export interface OpenStoresOptions<S extends HistorySettings> {
  /** The PostgreSQL database a cluster's nodes share. @default none: NeDB datafiles in `dataDir` */
  databaseUrl?: string;
  dataDir: string;
  /** Where the images and page sources of jobs past the history period are removed from. */
  files: FileStore;
  /** Reads the settings from their store; called once, as soon as that store is open. */
  loadSettings: (store: SettingsStore) => Promise<S>;
  now: () => number;
  log: Logger;
}

/**
 * Opens the stores of the backend configured, and the settings in them. With NeDB the settings
 * are read before jobs.db: their history period decides what of it is loaded at all.
 */
export async function openStores<S extends HistorySettings>(options: OpenStoresOptions<S>): Promise<{ stores: Stores; settings: S }> {
  const { loadSettings, log } = options;
  if (options.databaseUrl) {
    const stores = await openPgStores(options.databaseUrl, log);
    return { stores, settings: await loadSettings(stores.settings) };
  }
  let loaded: S | undefined;
  const stores = await openNedbStores(options.dataDir, log, {
    historyCutoff: async (store) => {
      loaded = await loadSettings(store);
      return options.now() - loaded.get().history_days * DAY_MS;
    },
    files: options.files,
  });
  return { stores, settings: loaded ?? (await loadSettings(stores.settings)) };
}
