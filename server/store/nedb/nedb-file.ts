import type Datastore from 'nedb-promises';

/** One NeDB datafile of documents of type T. */
export type NedbFile<T extends { _id: string }> = Datastore<T>;

/** An index definition as NeDB writes it into its file (`$$indexCreated`). */
export interface IndexDefinition {
  fieldName: string;
  unique?: boolean;
  sparse?: boolean;
}

/** A datafile's documents and index definitions, as NeDB's load reads them. */
export interface DatafileContents {
  docs: Array<Record<string, unknown>>;
  indexes: Record<string, IndexDefinition>;
}

/** Rewrites one datafile compactly, dropping the lines of removed and replaced documents. */
export function compactFile(file: NedbFile<{ _id: string }>): Promise<void> {
  // @seald-io/nedb's own method, reached through Datastore.create's proxy (nedb-promises has no wrapper for it).
  return (file as unknown as { compactDatafileAsync(): Promise<void> }).compactDatafileAsync();
}
