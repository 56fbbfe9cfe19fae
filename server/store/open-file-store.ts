import type { Config } from '../config.js';
import { DirectoryFileStore, type FileStore } from './file-store.js';
import { createS3Client, type StorageObserver } from './s3/s3-client.js';
import { S3FileStore } from './s3/s3-file-store.js';

/**
 * The files store configured: object storage for `--files s3://bucket/prefix`, else the
 * directory of --files, else the data directory. `observe` is told of each object storage
 * operation (the metrics).
 */
export function openFileStore(config: Pick<Config, 'dataDir' | 'filesDir' | 'objectStorage'>, observe?: StorageObserver): FileStore {
  const s3 = config.objectStorage;
  if (!s3) return new DirectoryFileStore(config.filesDir ?? config.dataDir);
  return new S3FileStore({ location: s3, client: createS3Client(s3, observe), presignSeconds: s3.presignSeconds });
}
