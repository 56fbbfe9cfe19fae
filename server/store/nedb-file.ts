import type Datastore from 'nedb-promises';

/** One NeDB datafile of documents of type T. */
export type NedbFile<T extends { _id: string }> = Datastore<T>;
