/**
 * An import that cannot start: the directory is not a data directory. Apart from the import
 * itself, so the command line knows it without loading the stores.
 */
export class ImportError extends Error {
  override readonly name = 'ImportError';
}
