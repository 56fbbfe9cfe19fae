import fs from 'node:fs/promises';

import { S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

import { tempDir } from './temp-dir.js';

/** What s3rver accepts; any credentials do as long as the client signs with these. */
export const S3_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' } as const;

/** A real S3 server (s3rver) on 127.0.0.1 and a free port, its objects in a temporary directory. */
export interface TestS3 {
  endpoint: string;
  port: number;
  /** The official SDK's client, path-style, signed with S3_CREDENTIALS. */
  client: S3Client;
  /** Stops answering (connections refused) until `start`. */
  stop(): Promise<void>;
  /** Answers again on the same port, with the same objects. */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

/**
 * Starts s3rver with `buckets` made. s3rver makes listing tokens with DES, which Node 20's
 * OpenSSL 3 has only in its legacy provider: listings past 1000 objects need
 * `--openssl-legacy-provider`; the tests list fewer.
 */
export async function startS3(buckets: string[] = ['shots']): Promise<TestS3> {
  const directory = await tempDir('sa-s3-');
  let server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: buckets.map((name) => ({ name })) });
  const { port } = (await server.run()) as { port: number };
  let running = true;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: S3_CREDENTIALS.AWS_REGION,
    credentials: { accessKeyId: S3_CREDENTIALS.AWS_ACCESS_KEY_ID, secretAccessKey: S3_CREDENTIALS.AWS_SECRET_ACCESS_KEY },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const stop = async () => {
    if (!running) return;
    running = false;
    await server.close();
  };
  return {
    endpoint,
    port,
    client,
    stop,
    async start() {
      if (running) return;
      server = new S3rver({ port, address: '127.0.0.1', silent: true, directory });
      await server.run();
      running = true;
    },
    async close() {
      client.destroy();
      await stop();
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
}

/** Lets the SDK's default chain of this process find s3rver's credentials (in-process servers). */
export function useS3Credentials(): void {
  Object.assign(process.env, S3_CREDENTIALS);
}
