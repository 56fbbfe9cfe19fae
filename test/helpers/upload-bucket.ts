import fs from 'node:fs/promises';
import { createRequire } from 'node:module';

import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

import { tempDir } from './temp-dir.js';

/** A real S3 server (s3rver) on 127.0.0.1, for the customer-upload tests; one per test file. */
export interface UploadBucketServer {
  port: number;
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** A client of the tests' own (path-style; s3rver takes any credentials). */
  client: S3Client;
  createBucket(name: string): Promise<void>;
  /** The object's bytes and content type, or null when there is none. */
  read(bucket: string, key: string): Promise<{ body: Buffer; contentType: string | undefined } | null>;
  /** Makes s3rver accept one more access key (it checks each request's signature with its secret). */
  addKeyPair(accessKeyId: string, secretAccessKey: string): void;
  /** Every key in the bucket. */
  keys(bucket: string): Promise<string[]>;
  close(): Promise<void>;
}

/** s3rver's credentials (it accepts any, these are its defaults). */
export const S3RVER_CREDENTIALS = { access_key_id: 'S3RVER', secret_access_key: 'S3RVER' };

/**
 * Starts s3rver on 127.0.0.1 on a free port. `serviceEndpoint` is the domain under which it reads
 * virtual-hosted bucket names (`<bucket>.s3.<serviceEndpoint>`).
 */
export async function startUploadBucketServer(options: { serviceEndpoint?: string } = {}): Promise<UploadBucketServer> {
  const directory = await tempDir('sa-s3rver-');
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, ...(options.serviceEndpoint ? { serviceEndpoint: options.serviceEndpoint } : {}) });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3RVER_CREDENTIALS.access_key_id, secretAccessKey: S3RVER_CREDENTIALS.secret_access_key },
  });
  return {
    port,
    endpoint,
    client,
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    async read(bucket, key) {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return { body: Buffer.from(await answer.Body!.transformToByteArray()), contentType: answer.ContentType };
      } catch (err) {
        if ((err as { name?: string }).name === 'NoSuchKey') return null;
        throw err;
      }
    },
    addKeyPair(accessKeyId, secretAccessKey) {
      const accounts = createRequire(import.meta.url)('s3rver/lib/models/account.js') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } };
      accounts.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
    },
    async keys(bucket) {
      const answer = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (answer.Contents ?? []).map((o) => o.Key ?? '');
    },
    async close() {
      client.destroy();
      await server.close();
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
}
