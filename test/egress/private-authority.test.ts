import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../../server/config.js';
import type { Resolver } from '../../server/egress/policy.js';
import { createEgressPolicy } from '../../server/egress/policy.js';
import { nodeCa, readAuthorities } from '../../server/egress/trusted-authorities.js';
import { guardedS3Client } from '../../server/uploads/guarded-s3.js';
import { makeTestAuthority, type TestAuthority } from '../helpers/test-authority.js';
import { type TestServer, testServerForFile, waitForJob } from '../helpers/test-server.js';

/** An HTTPS site (and webhook receiver) on 127.0.0.1 with a certificate of the test authority. */
interface SecureSite {
  port: number;
  hooks: string[];
  close(): Promise<void>;
}

async function startSecureSite(authority: TestAuthority): Promise<SecureSite> {
  const hooks: string[] = [];
  const server = https.createServer({ key: authority.key, cert: authority.cert }, (req, res) => {
    if (req.method === 'POST' || req.method === 'PUT') {
      hooks.push(req.url ?? '');
      req.resume();
      return void res.writeHead(204).end();
    }
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (req.url === '/to-other') return void res.writeHead(302, { location: `https://other.test:${port}/` }).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>secure ${host}</title><h1>Signed by a private authority</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    hooks,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const resolve: Resolver = async (host) => {
  if (host === 'secure.test' || host === 'other.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`${host} is unknown`), { code: 'ENOTFOUND' });
};

// Made now, so that a server's config can name the authority's file; the file is written before any server starts.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-test-'));
let authority: TestAuthority;
let site: SecureSite;
beforeAll(async () => {
  authority = await makeTestAuthority(dir, ['secure.test', 'other.test']);
  site = await startSecureSite(authority);
});
afterAll(async () => {
  await site?.close();
  await fs.promises.rm(dir, { recursive: true, force: true });
});

const at = (host: string) => `https://${host}:${site.port}/`;

async function capture(server: TestServer, url: string, scope: unknown = 'lan', extra: Record<string, unknown> = {}) {
  const { key } = await server.account({}, { network_scope: scope });
  const created = await (await server.v1('POST', '/screenshot', key, { url, ...extra })).json();
  return waitForJob(server, key, created.job_id);
}

async function firstAttempt(server: TestServer, jobId: string): Promise<{ status: string; attempts: Array<{ status_code: number | null; error: string | null }> }> {
  for (let i = 0; i < 100; i++) {
    const delivery = (await server.admin('GET', `/webhooks?job_id=${jobId}`)).body.deliveries[0];
    if (delivery?.attempts.length) return delivery;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no webhook attempt for ${jobId}`);
}

describe('a site signed by a private authority, without --ca-file', () => {
  const server = testServerForFile({ browsers: 1, ratePerSecond: 1000 }, { resolve });

  it('fails the job with a message naming the host and the certificate error', async () => {
    const job = await capture(server, at('127.0.0.1'), 'lan', { callback_url: `${at('127.0.0.1')}hook` });
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/127\.0\.0\.1/);
    expect(job.error).toMatch(/certificate is not valid \(net::ERR_CERT_AUTHORITY_INVALID\)/);
    const delivery = await firstAttempt(server, job.job_id);
    expect(delivery.attempts[0].error).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify/);
    expect(site.hooks).toHaveLength(0);
  });
});

describe('a site signed by a private authority, with --ca-file', () => {
  const server = testServerForFile({ browsers: 1, ratePerSecond: 1000, caFiles: [path.join(dir, 'ca.pem')] }, { resolve });

  it('captures it, and delivers its webhook over HTTPS', async () => {
    const job = await capture(server, at('127.0.0.1'), 'lan', { callback_url: `${at('127.0.0.1')}hook` });
    expect(job).toMatchObject({ status: 'completed', page_title: 'secure 127.0.0.1' });
    expect((await firstAttempt(server, job.job_id)).attempts[0]).toMatchObject({ status_code: 204, error: null });
    expect(site.hooks).toContain('/hook');
  });

  it('still fails a certificate that does not name the host asked for', async () => {
    const job = await capture(server, at('localhost'));
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/localhost.*certificate is not valid \(net::ERR_CERT_COMMON_NAME_INVALID\)/);
  });

  it("holds a key's HTTPS tunnels to its scope", async () => {
    expect(await capture(server, at('secure.test'), ['secure.test'])).toMatchObject({ status: 'completed', page_title: 'secure secure.test' });
    const redirected = await capture(server, `${at('secure.test')}to-other`, ['secure.test']);
    expect(redirected.status).toBe('failed');
    expect(redirected.error).toMatch(/other\.test resolves to 127\.0\.0\.1, outside the network scope \[secure\.test\] of the key/);
  });
});

describe('--ca-file and SCREENSHOT_CA_FILES', () => {
  it('reads a comma-separated list of files from the environment', () => {
    expect(loadConfig({ SCREENSHOT_CA_FILES: '/etc/corp/root.pem, /etc/corp/issuing.pem' }).caFiles).toEqual(['/etc/corp/root.pem', '/etc/corp/issuing.pem']);
  });

  it('reads every certificate of a bundle', () => {
    const bundle = path.join(dir, 'bundle.pem');
    fs.writeFileSync(bundle, `# corp\n${authority.cert}\n${fs.readFileSync(path.join(dir, 'ca.pem'), 'utf8')}`);
    expect(readAuthorities([bundle]).certificates).toHaveLength(2);
  });

  it('stops the start, naming the file, for a file that is missing or holds no certificate', () => {
    expect(() => readAuthorities([path.join(dir, 'missing.pem')])).toThrow(ConfigError);
    expect(() => readAuthorities([path.join(dir, 'missing.pem')])).toThrow(/missing\.pem cannot be read/);
    const key = path.join(dir, 'server.key');
    expect(() => readAuthorities([key])).toThrow(/server\.key holds no PEM certificate/);
  });
});

describe("uploads to an account's bucket signed by a private authority", () => {
  const policy = createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }, { resolve });
  const destination = () => ({
    record: {
      _id: 'acct',
      endpoint: at('127.0.0.1').replace(/\/$/, ''),
      bucket: 'shots',
      prefix: '',
      region: 'us-east-1',
      path_style: true,
      access_key_hint: 'AK…',
      sealed_credentials: '',
      updated_at: 0,
    },
    credentials: { access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secret' },
  });

  async function put(ca: string[] | undefined): Promise<unknown> {
    const s3 = await guardedS3Client(destination(), policy, { connectMs: 5_000, requestMs: 5_000 }, { ca });
    try {
      return await s3.client.send(new PutObjectCommand({ Bucket: 'shots', Key: 'a.png', Body: Buffer.from('png') }));
    } finally {
      s3.close();
    }
  }

  it('trust the authorities of --ca-file, and only those', async () => {
    await expect(put(undefined)).rejects.toThrow(/unable to verify the first certificate|UNABLE_TO_VERIFY_LEAF_SIGNATURE/);
    await expect(put(nodeCa(readAuthorities([path.join(dir, 'ca.pem')])))).resolves.toBeTruthy();
    expect(site.hooks.some((hook) => hook.startsWith('/shots/a.png'))).toBe(true);
  });
});
