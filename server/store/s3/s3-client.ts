import { S3Client } from '@aws-sdk/client-s3';

/** Where the service's files live in object storage (--files s3://bucket/prefix). */
export interface S3Location {
  bucket: string;
  /** Every key starts with it: empty, or path segments ending in `/`. */
  prefix: string;
  /** A non-AWS endpoint (MinIO, Ceph RGW, R2…): addressed path-style. @default AWS, by region */
  endpoint?: string;
}

/** Told of each storage operation: its name (`PutObject`…), its time and whether it failed. */
export type StorageObserver = (operation: string, seconds: number, failed: boolean) => void;

/** A region when neither AWS_REGION nor ~/.aws/config names one: any does for a non-AWS endpoint. */
const FALLBACK_REGION = 'us-east-1';
/** Bounds on one request, each try: connecting, then waiting for the answer. */
const CONNECT_TIMEOUT_MS = 5000;
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * The S3 client of the files store. Credentials, region and profile come from the SDK's own
 * default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ~/.aws/credentials and
 * config, container and instance roles); a region none of them names falls back to us-east-1,
 * which any endpoint of our own accepts. Checksums are sent only where the API requires them,
 * as S3-compatible servers expect. Each operation, its retries included, is told to `observe`.
 */
export function createS3Client(location: S3Location, observe?: StorageObserver): S3Client {
  quietNodeVersionWarning();
  const client = new S3Client({
    region: defaultRegion,
    ...(location.endpoint ? { endpoint: location.endpoint, forcePathStyle: true } : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
  });
  if (observe) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = String(context.commandName ?? 'Unknown').replace(/Command$/, '');
        const started = performance.now();
        try {
          const output = await next(args);
          observe(operation, (performance.now() - started) / 1000, false);
          return output;
        } catch (err) {
          // An object that is not there is an answer, not a failure of the storage.
          observe(operation, (performance.now() - started) / 1000, httpStatus(err) !== 404);
          throw err;
        }
      },
      { step: 'initialize', name: 'screenshotStorageMetrics' },
    );
  }
  return client;
}

/** The HTTP status object storage answered with, if it answered. */
export function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

let region: Promise<string> | undefined;

/** The region the SDK's default chain names (AWS_REGION, the profile's config), or us-east-1. */
function defaultRegion(): Promise<string> {
  region ??= new S3Client({}).config.region().catch(() => FALLBACK_REGION);
  return region;
}

let quieted = false;

/**
 * The SDK warns once per process, on Node 20, that its releases from 2027 will need Node 22.
 * It is no news to an operator reading the service's output: that one warning is dropped, every
 * other passes.
 */
export function quietNodeVersionWarning(): void {
  if (quieted) return;
  quieted = true;
  const emit = process.emitWarning.bind(process);
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning?.message;
    if (text?.startsWith('NodeVersionSupportWarning')) return;
    (emit as (...args: unknown[]) => void)(warning, ...rest);
  }) as typeof process.emitWarning;
}
