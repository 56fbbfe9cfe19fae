import type { Readable } from 'node:stream';

import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

import {
  evidenceName,
  type FilesHealth,
  type FileStore,
  type JobFiles,
  makeThumbnail,
  ObjectStorageError,
  OUTPUT_EXTENSIONS,
  STORED_OUTPUTS,
  type StoredObject,
  type StoredOutput,
  thumbnailName,
} from '../file-store.js';
import type { MarkerPlace } from '../shared-files.js';
import { httpStatus, type S3Location } from './s3-client.js';

/** Keys a DeleteObjects request takes at most. */
const DELETE_BATCH = 1000;
/** Parts of a multipart upload; an image under it goes in one PutObject. S3's smallest part is 5 MiB. */
const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
/** How long /readyz waits for the bucket to answer. */
const HEALTH_TIMEOUT_MS = 3000;

const CONTENT_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
  pdf: 'application/pdf',
  html: 'text/html; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  json: 'application/json',
};

export interface S3FileStoreOptions {
  location: S3Location;
  client: S3Client;
  /** Seconds a presigned image address lasts; screenshot_url then redirects to one. @default none: streamed */
  presignSeconds?: number;
  /** Bytes per part of a multipart upload. @default 8 MiB */
  partSize?: number;
}

/**
 * The files as objects under one prefix of a bucket, keyed like the directories:
 * `files/<name>`, `thumbnails/<name>.webp`, `sources/<job>.html` and `sources/<job>.md|txt|links.json`.
 * A PutObject, or a multipart upload completed (and aborted on any failure), stores an object
 * whole or not at all, so nothing is ever listed or cleaned up at start. A refusal or a storage
 * that does not answer is an ObjectStorageError naming the bucket and its answer.
 */
export class S3FileStore implements FileStore {
  readonly where: string;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly client: S3Client;

  constructor(private readonly options: S3FileStoreOptions) {
    this.bucket = options.location.bucket;
    this.prefix = options.location.prefix;
    this.client = options.client;
    this.where = `s3://${this.bucket}/${this.prefix}`;
  }

  /** Nothing to prepare: uploads are atomic, so no temporaries are left to find. */
  async init(): Promise<void> {}

  imageKey(fileName: string): string {
    return `${this.prefix}files/${baseName(fileName)}`;
  }

  thumbnailKey(fileName: string): string {
    return `${this.prefix}thumbnails/${thumbnailName(fileName)}`;
  }

  sourceKey(jobId: string): string {
    return `${this.prefix}sources/${baseName(jobId)}.html`;
  }

  outputKey(jobId: string, output: StoredOutput): string {
    return `${this.prefix}sources/${baseName(jobId)}.${OUTPUT_EXTENSIONS[output]}`;
  }

  writeImage(fileName: string, data: Buffer): Promise<void> {
    return this.put(this.imageKey(fileName), data);
  }

  async image(fileName: string): Promise<StoredObject | null> {
    const key = this.imageKey(fileName);
    let head;
    try {
      head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (httpStatus(err) === 404) return null;
      throw this.failure(err);
    }
    return {
      size: head.ContentLength ?? 0,
      lastModified: head.LastModified ?? new Date(0),
      open: async (range) => {
        try {
          const answer = await this.client.send(
            new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
          );
          return answer.Body as Readable;
        } catch (err) {
          throw this.failure(err);
        }
      },
    };
  }

  readImage(fileName: string): Promise<Buffer | null> {
    return this.get(this.imageKey(fileName));
  }

  async writeThumbnail(fileName: string, image: Buffer): Promise<Buffer> {
    const thumbnail = await makeThumbnail(image);
    await this.put(this.thumbnailKey(fileName), thumbnail);
    return thumbnail;
  }

  async readThumbnail(fileName: string): Promise<Buffer | null> {
    const stored = await this.get(this.thumbnailKey(fileName));
    if (stored) return stored;
    const image = await this.readImage(fileName);
    return image && this.writeThumbnail(fileName, image);
  }

  writeSource(jobId: string, html: string): Promise<void> {
    return this.put(this.sourceKey(jobId), Buffer.from(html));
  }

  async readSource(jobId: string): Promise<string | null> {
    return (await this.get(this.sourceKey(jobId)))?.toString('utf8') ?? null;
  }

  writeOutput(jobId: string, output: StoredOutput, content: string): Promise<void> {
    return this.put(this.outputKey(jobId, output), Buffer.from(content));
  }

  async readOutput(jobId: string, output: StoredOutput): Promise<string | null> {
    return (await this.get(this.outputKey(jobId, output)))?.toString('utf8') ?? null;
  }

  removeImage(fileName: string): Promise<void> {
    return this.deleteKeys([this.imageKey(fileName), this.thumbnailKey(fileName)]);
  }

  remove(fileName: string | undefined, jobId: string): Promise<void> {
    return this.removeMany([{ image: fileName, jobId }]);
  }

  /** Every key of the jobs, deleted up to 1000 at a time; keys already gone are no error. */
  async removeMany(jobs: readonly JobFiles[]): Promise<void> {
    const keys = jobs.flatMap((job) => [
      ...(job.image ? [this.imageKey(job.image), this.thumbnailKey(job.image), this.imageKey(evidenceName(job.image))] : []),
      this.sourceKey(job.jobId),
      ...STORED_OUTPUTS.map((output) => this.outputKey(job.jobId, output)),
    ]);
    for (let i = 0; i < keys.length; i += DELETE_BATCH) await this.deleteKeys(keys.slice(i, i + DELETE_BATCH));
  }

  async presignedImageUrl(fileName: string): Promise<string | null> {
    const seconds = this.options.presignSeconds;
    if (!seconds) return null;
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: this.imageKey(fileName) }), { expiresIn: seconds });
  }

  /** The markers as objects next to `files/`, under the prefix. */
  markers(): MarkerPlace {
    const key = (name: string) => `${this.prefix}${baseName(name)}`;
    return {
      where: this.where,
      read: async (name) => (await this.get(key(name)))?.toString('utf8') ?? null,
      write: (name, content) => this.put(key(name), Buffer.from(content)),
      remove: (name) => this.deleteKeys([key(name)]),
    };
  }

  /** HeadBucket, bounded: `ok`, or what the bucket answered (or that it did not). */
  async health(): Promise<FilesHealth> {
    let state = 'ok';
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    } catch (err) {
      state = httpStatus(err) === undefined ? `unreachable (${noAnswer(err)})` : `answering ${answerOf(err)}`;
    }
    return { where: this.where, parts: { bucket: state } };
  }

  /** Stores a whole object: one PutObject, or a multipart upload aborted on failure. */
  private async put(key: string, body: Buffer): Promise<void> {
    const params = { Bucket: this.bucket, Key: key, Body: body, ContentType: CONTENT_TYPES[key.split('.').pop() ?? ''] ?? 'application/octet-stream' };
    const partSize = this.options.partSize ?? DEFAULT_PART_SIZE;
    try {
      if (body.length <= partSize) await this.client.send(new PutObjectCommand(params));
      else await new Upload({ client: this.client, params, partSize, queueSize: 2, leavePartsOnError: false }).done();
    } catch (err) {
      throw this.failure(err);
    }
  }

  private async get(key: string): Promise<Buffer | null> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Buffer.from(await answer.Body!.transformToByteArray());
    } catch (err) {
      if (httpStatus(err) === 404) return null;
      throw this.failure(err);
    }
  }

  private async deleteKeys(keys: string[]): Promise<void> {
    let answer;
    try {
      answer = await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
      );
    } catch (err) {
      throw this.failure(err);
    }
    const refused = answer.Errors?.[0];
    if (refused) throw new ObjectStorageError(this.bucket, `${refused.Code ?? 'an error'} deleting ${answer.Errors!.length} object(s)`);
  }

  private failure(err: unknown): ObjectStorageError {
    return err instanceof ObjectStorageError ? err : new ObjectStorageError(this.bucket, answerOf(err), err);
  }
}

/** A name with no path in it: keys are made of names the service chose, never of a path. */
function baseName(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

/** What the storage answered, in a few words safe to show in a job: `503 SlowDown`, `nothing (ECONNREFUSED)`. */
export function answerOf(err: unknown): string {
  const status = httpStatus(err);
  const e = err as { name?: string; Code?: string } | undefined;
  if (status !== undefined) return `${status} ${e?.Code ?? e?.name ?? 'an error'}`.trim();
  return `nothing (${noAnswer(err)})`;
}

/** Why a request got no answer: the system error code (ECONNREFUSED…) or the error's name (TimeoutError). */
function noAnswer(err: unknown): string {
  const e = err as { name?: string; code?: string } | undefined;
  return e?.code ?? e?.name ?? 'no answer';
}
