// A completed job's image goes to its account's own bucket (a real s3rver on 127.0.0.1, the
// official SDK), and only through the egress guard: every spelling of a denied address, a
// name resolving to one and the service's own port are refused before any connection.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CaptureError, type CaptureResult } from '../../server/capture/engine.js';
import { SecretBox } from '../../server/crypto/secret-box.js';
import { IpEgressPolicy, type Resolver } from '../../server/egress/policy.js';
import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import type { JobRecord } from '../../server/store/records/job-record.js';
import type { Stores } from '../../server/store/stores.js';
import { systemClock } from '../../server/time.js';
import { CustomerUploads } from '../../server/uploads/customer-upload.js';
import { StorageDestinations } from '../../server/uploads/destinations.js';
import { closedPort } from '../helpers/ports.js';
import { tempDir } from '../helpers/temp-dir.js';
import { S3RVER_CREDENTIALS, startUploadBucketServer, type UploadBucketServer } from '../helpers/upload-bucket.js';
import { jobRecord, newAccount } from '../store/conformance-records.js';

const BUCKET = 'shots';

/** Names the tests resolve: everything under storage.test, to the address its first label says. */
const resolve: Resolver = async (hostname) => {
  if (hostname === 'denied.storage.test' || hostname === 'shots.s3.denied-vhost.test') return [{ address: '127.0.0.2', family: 4 }];
  if (hostname.endsWith('storage.test') || hostname.endsWith('denied-vhost.test')) return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`no such name ${hostname}`), { code: 'ENOTFOUND' });
};

let s3: UploadBucketServer;
let dataDir: string;
let stores: Stores;
let destinations: StorageDestinations;

beforeAll(async () => {
  s3 = await startUploadBucketServer({ serviceEndpoint: 'storage.test' });
  await s3.createBucket(BUCKET);
  dataDir = await tempDir('sa-uploads-');
  stores = await openNedbStores(dataDir, silentLogger);
  destinations = new StorageDestinations({ store: stores.destinations, accounts: stores.accounts, secrets: SecretBox.forDataDir(dataDir), clock: systemClock });
}, 60_000);
afterAll(async () => {
  await stores?.close();
  await s3?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

/** The guard as the tests' server has it: only 127.0.0.1 of loopback allowed. */
const allowingLoopbackOne = () => new IpEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }, { resolve });
/** The guard as it is by default: no loopback at all. */
const byDefault = () => new IpEgressPolicy({ allow: [], denyLan: false }, { resolve });

/** An account with a destination at `endpoint`, and a completed job of it asking for an upload. */
async function jobWithDestination(endpoint: string, destination: { prefix?: string; path_style?: boolean } = {}, options: JobRecord['options'] = { upload: true }): Promise<JobRecord> {
  const account = await stores.accounts.insert(newAccount());
  await destinations.put(account._id, { endpoint, bucket: BUCKET, path_style: true, ...destination, ...S3RVER_CREDENTIALS });
  return jobRecord({ _id: `job_${crypto.randomBytes(12).toString('hex')}`, account_id: account._id, device: 'mobile', options, created_at: Date.UTC(2026, 10, 25, 23, 59) });
}

const picture = (format: CaptureResult['format'] = 'png', image = crypto.randomBytes(2048)) =>
  ({ image, format, warnings: [{ code: 'console_errors', message: 'The page reported 1 error' }] }) as unknown as CaptureResult;

describe('uploads to the customer bucket', () => {
  it('puts the image at <prefix>/<job_id>-<device>.<ext> with its content type, and says where', async () => {
    const job = await jobWithDestination(s3.endpoint, { prefix: 'customer/shots/' });
    const result = picture('jpeg');
    const outcome = await new CustomerUploads({ destinations, policy: allowingLoopbackOne(), log: silentLogger }).upload(job, result);
    const key = `customer/shots/${job._id}-mobile.jpg`;
    expect(outcome).toEqual({ uploaded_to: { bucket: BUCKET, key } });
    const stored = await s3.read(BUCKET, key);
    expect(stored?.contentType).toBe('image/jpeg');
    expect(stored?.body.equals(result.image)).toBe(true);
  });

  it('fills the storage_path template: {job_id}, {device}, {date} (UTC) and {ext}', async () => {
    const job = await jobWithDestination(s3.endpoint, { prefix: 'p' }, { upload: true, storagePath: 'by-day/{date}/{device}/{job_id}.{ext}' });
    const outcome = await new CustomerUploads({ destinations, policy: allowingLoopbackOne(), log: silentLogger }).upload(job, picture('webp'));
    const key = `p/by-day/2026-11-25/mobile/${job._id}.webp`;
    expect(outcome.uploaded_to).toEqual({ bucket: BUCKET, key });
    expect((await s3.read(BUCKET, key))?.contentType).toBe('image/webp');
  });

  it('uploads an image larger than a part in several parts, whole', async () => {
    const job = await jobWithDestination(s3.endpoint);
    const big = crypto.randomBytes(11 * 1024 * 1024);
    const outcome = await new CustomerUploads({ destinations, policy: allowingLoopbackOne(), log: silentLogger }).upload(job, picture('png', big));
    const stored = await s3.read(BUCKET, outcome.uploaded_to?.key ?? '');
    expect(stored?.body.length).toBe(big.length);
    expect(stored?.body.equals(big)).toBe(true);
    expect(stored?.contentType).toBe('image/png');
  }, 60_000);

  it('reaches a virtual-hosted bucket (bucket.endpoint) through the guard', async () => {
    const job = await jobWithDestination(`http://s3.storage.test:${s3.port}`, { path_style: false });
    const outcome = await new CustomerUploads({ destinations, policy: allowingLoopbackOne(), log: silentLogger }).upload(job, picture());
    expect(outcome.uploaded_to?.key).toBe(`${job._id}-mobile.png`);
    expect(await s3.read(BUCKET, `${job._id}-mobile.png`)).not.toBeNull();
  });

  it('does nothing for a job that asked for no upload', async () => {
    const job = await jobWithDestination(s3.endpoint, {}, {});
    expect(await new CustomerUploads({ destinations, policy: allowingLoopbackOne(), log: silentLogger }).upload(job, picture())).toEqual({});
  });
});

describe('the egress guard before the customer bucket', () => {
  /** Uploads through `policy` to a destination at `endpoint`; the warning it gives, after checking nothing landed. */
  async function refused(endpoint: string, policy: IpEgressPolicy, destination: { path_style?: boolean } = {}): Promise<string> {
    const job = await jobWithDestination(endpoint, destination);
    const result = picture();
    const outcome = await new CustomerUploads({ destinations, policy, log: silentLogger }).upload(job, result);
    expect(outcome.uploaded_to).toBeUndefined();
    expect(outcome.warnings?.slice(0, -1)).toEqual(result.warnings);
    const warning = outcome.warnings?.at(-1);
    expect(warning?.code).toBe('upload_failed');
    expect((await s3.keys(BUCKET)).filter((key) => key.startsWith(job._id))).toEqual([]);
    return warning?.message ?? '';
  }

  // By default loopback is denied: each spelling of the s3rver's own address, which it would reach.
  it.each([
    ['the dotted address', (p: number) => `http://127.0.0.1:${p}`],
    ['a decimal literal', (p: number) => `http://2130706433:${p}`],
    ['a hex literal', (p: number) => `http://0x7f000001:${p}`],
    ['an octal literal', (p: number) => `http://0177.0.0.1:${p}`],
    ['the IPv4-mapped IPv6 form', (p: number) => `http://[::ffff:127.0.0.1]:${p}`],
    ['the IPv4-mapped IPv6 form in hex', (p: number) => `http://[::FFFF:7F00:1]:${p}`],
    ['localhost in capitals with a trailing dot', (p: number) => `HTTP://LOCALHOST.:${p}`],
    ['a name resolving to it, in capitals', (p: number) => `http://S3.STORAGE.TEST:${p}`],
  ])('refuses the loopback s3rver by %s, and uploads nothing', async (_, endpoint) => {
    expect(await refused(endpoint(s3.port), byDefault())).toMatch(/blocked by egress policy: .*loopback/);
  });

  it.each([
    ['127.0.0.2 while only 127.0.0.1 is allowed', (p: number) => `http://127.0.0.2:${p}`],
    ['its IPv4-mapped form', (p: number) => `http://[::ffff:127.0.0.2]:${p}`],
    ['a name resolving to it', (p: number) => `http://denied.storage.test:${p}`],
    ['the IPv6 loopback', (p: number) => `http://[::1]:${p}`],
    ['the unspecified address', (p: number) => `http://0.0.0.0:${p}`],
  ])('refuses %s', async (_, endpoint) => {
    expect(await refused(endpoint(s3.port), allowingLoopbackOne())).toMatch(/blocked by egress policy/);
  });

  it('refuses the link-local metadata address', async () => {
    expect(await refused('http://169.254.169.254', allowingLoopbackOne())).toMatch(/blocked by egress policy: 169\.254\.169\.254 is a link-local address/);
  });

  it("refuses the service's own port, also on an allowed address", async () => {
    const policy = allowingLoopbackOne();
    policy.denyLocalPort(s3.port);
    expect(await refused(s3.endpoint, policy)).toMatch(/blocked by egress policy: .*belongs to this service/);
  });

  it("refuses a virtual-hosted bucket whose own name resolves to a denied address, though the endpoint's is allowed", async () => {
    expect(await refused(`http://s3.denied-vhost.test:${s3.port}`, allowingLoopbackOne(), { path_style: false })).toMatch(/blocked by egress policy: .*127\.0\.0\.2/);
  });

  it('warns when the destination is down, and when the account has no destination any more', async () => {
    expect(await refused(`http://127.0.0.1:${await closedPort()}`, allowingLoopbackOne())).toMatch(/not uploaded to the storage destination: .*ECONNREFUSED/);

    const job = await jobWithDestination(s3.endpoint);
    await destinations.remove(job.account_id);
    const outcome = await new CustomerUploads({ destinations, policy: allowingLoopbackOne(), log: silentLogger }).upload(job, picture());
    expect(outcome.warnings?.at(-1)?.message).toMatch(/no storage destination any more/);
  });
});

describe('a destination that does not answer', () => {
  let silent: net.Server;
  let endpoint: string;
  beforeAll(async () => {
    // Takes connections, reads what comes and never answers.
    silent = net.createServer((socket) => socket.resume());
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => silent.close(r));
  });

  const openConnections = () => new Promise<number>((resolve, reject) => silent.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  it('is given up after the upload time, with a warning, and leaves no connection open', async () => {
    const job = await jobWithDestination(endpoint);
    const outcome = await new CustomerUploads({ destinations, policy: allowingLoopbackOne(), log: silentLogger, timeoutMs: 300 }).upload(job, picture());
    expect(outcome.warnings?.at(-1)?.message).toMatch(/no answer within 0\.3 s$/);
    await expect.poll(openConnections, { timeout: 5_000 }).toBe(0);
    // Nor does the SDK try again behind the job's back.
    await new Promise((r) => setTimeout(r, 500));
    expect(await openConnections()).toBe(0);
  });

  it("stops with its job: a shutdown's reason is thrown for the job's run to handle, its time running out is a warning", async () => {
    const uploads = new CustomerUploads({ destinations, policy: allowingLoopbackOne(), log: silentLogger });
    const job = await jobWithDestination(endpoint);
    const shutdown = new AbortController();
    const stopped = uploads.upload(job, picture(), shutdown.signal);
    setTimeout(() => shutdown.abort(new Error('shutting down')), 200);
    await expect(stopped).rejects.toThrow('shutting down');

    const deadline = new AbortController();
    const late = uploads.upload(job, picture(), deadline.signal);
    setTimeout(() => deadline.abort(new CaptureError('The capture took too long and was stopped')), 200);
    expect((await late).warnings?.at(-1)?.message).toMatch(/the job's time ran out during the upload$/);
    await expect.poll(openConnections, { timeout: 5_000 }).toBe(0);
  });
});
