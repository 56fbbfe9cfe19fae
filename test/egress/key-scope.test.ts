import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Resolver } from '../../server/egress/policy.js';
import { testServerForFile, waitForJob } from '../helpers/test-server.js';
import { type Receiver, startReceiver } from '../webhooks/receiver.js';

/** A LAN site on 127.0.0.1 (which the test server's admin allows), answering every name it is asked for. */
interface LanSite {
  port: number;
  /** "host path" of every request it answered. */
  hits: string[];
  close(): Promise<void>;
}

async function startLanSite(): Promise<LanSite> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    hits.push(`${host} ${req.url}`);
    if (req.url === '/to-other') {
      res.writeHead(302, { location: `http://other.test:${port}/page` }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>${host}</title><h1>The wiki at ${host}</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// Two names on one address, known only to this test: behind the proxy the browser never resolves a name itself.
const resolve: Resolver = async (host) => {
  if (host === 'wiki.test' || host === 'other.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`${host} is unknown`), { code: 'ENOTFOUND' });
};

describe("a key's network scope", () => {
  const server = testServerForFile({ browsers: 1, ratePerSecond: 1000 }, { resolve });
  let site: LanSite;
  let receiver: Receiver;
  beforeAll(async () => {
    site = await startLanSite();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await site?.close();
    await receiver?.close();
  });

  const at = (host: string, path = '/page') => `http://${host}:${site.port}${path}`;
  const reached = (host: string) => site.hits.filter((hit) => hit.startsWith(`${host} `)).length;

  async function captureWith(scope: unknown, url: string, extra: Record<string, unknown> = {}) {
    const { key } = await server.account({}, { network_scope: scope });
    const created = await (await server.v1('POST', '/screenshot', key, { url, ...extra })).json();
    return waitForJob(server, key, created.job_id);
  }

  it('keeps a "public" key from a LAN site the admin allows', async () => {
    const before = reached('127.0.0.1');
    const job = await captureWith('public', at('127.0.0.1'));
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/127\.0\.0\.1 is outside the network scope "public" of the key/);
    expect(reached('127.0.0.1')).toBe(before);
  });

  it('lets a key granted 127.0.0.1/32 capture it', async () => {
    const job = await captureWith(['127.0.0.1/32'], at('127.0.0.1'));
    expect(job).toMatchObject({ status: 'completed', page_title: '127.0.0.1' });
  });

  it('lets a key granted a host name capture that name and not another name on the same address', async () => {
    expect(await captureWith(['wiki.test'], at('WIKI.test.'))).toMatchObject({ status: 'completed', page_title: expect.stringMatching(/^wiki\.test\.?$/) });
    const before = reached('other.test');
    const other = await captureWith(['wiki.test'], at('other.test'));
    expect(other.status).toBe('failed');
    expect(other.error).toMatch(/other\.test resolves to 127\.0\.0\.1, outside the network scope \[wiki\.test\] of the key/);
    // A redirect is followed by the browser, so the egress proxy decides, on the name the browser asks for.
    const redirected = await captureWith(['wiki.test'], at('wiki.test', '/to-other'));
    expect(redirected.status).toBe('failed');
    expect(redirected.error).toMatch(/other\.test resolves to 127\.0\.0\.1, outside the network scope \[wiki\.test\] of the key/);
    expect(reached('other.test')).toBe(before);
  });

  it("sends no webhook of a key's job to an address outside its scope", async () => {
    const job = await captureWith(['wiki.test'], at('wiki.test'), { callback_url: `${receiver.url}/hook` });
    expect(job.status).toBe('completed');
    let delivery: { status: string; attempts: Array<{ error: string | null }> } | undefined;
    for (let i = 0; i < 100 && delivery?.status !== 'failed'; i++) {
      delivery = (await server.admin('GET', `/webhooks?job_id=${job.job_id}`)).body.deliveries[0];
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(delivery?.status).toBe('failed');
    expect(delivery?.attempts[0].error).toMatch(/127\.0\.0\.1 is outside the network scope \[wiki\.test\] of the key/);
    expect(receiver.received).toHaveLength(0);
  });

  it('holds the jobs a key has waiting to the scope it is given meanwhile', async () => {
    const { key, keyId } = await server.account({}, { network_scope: ['127.0.0.1/32'] });
    await server.admin('POST', '/queue/pause');
    let created: { job_id: string };
    try {
      created = await (await server.v1('POST', '/screenshot', key, { url: at('127.0.0.1') })).json();
      const patched = await server.admin('PATCH', `/keys/${keyId}`, { network_scope: 'public' });
      expect(patched.body.network_scope).toBe('public');
    } finally {
      await server.admin('POST', '/queue/resume');
    }
    expect((await waitForJob(server, key, created.job_id)).error).toMatch(/outside the network scope "public"/);
  });

  it("holds a key's render links to its scope", async () => {
    const { keyId } = await server.account({}, { network_scope: 'public' });
    const link = await server.admin('POST', `/keys/${keyId}/render-link`, { url: at('127.0.0.1') });
    const answer = await fetch(link.body.render_url);
    expect(answer.status).toBe(502);
    expect((await answer.json()).message).toMatch(/127\.0\.0\.1 is outside the network scope "public" of the key/);
  });
});

describe('network scopes in the admin API', () => {
  const server = testServerForFile({ browsers: 1 });

  it("gives new keys the account's default scope, which the admin sets", async () => {
    const lan = await server.admin('POST', '/accounts', { email: `lan-${Date.now()}@example.test` });
    expect(lan.body.default_network_scope).toBe('lan');
    expect((await server.admin('POST', `/accounts/${lan.body.id}/keys`, {})).body.network_scope).toBe('lan');

    const narrow = await server.admin('POST', '/accounts', { email: `pub-${Date.now()}@example.test`, default_network_scope: 'public' });
    expect((await server.admin('POST', `/accounts/${narrow.body.id}/keys`, {})).body.network_scope).toBe('public');
    const changed = await server.admin('PATCH', `/accounts/${narrow.body.id}`, { default_network_scope: ['Wiki.Corp.Example.', '10.20.1.0/16'] });
    expect(changed.body.default_network_scope).toEqual(['wiki.corp.example', '10.20.0.0/16']);
    const key = await server.admin('POST', `/accounts/${narrow.body.id}/keys`, {});
    expect(key.body.network_scope).toEqual(['wiki.corp.example', '10.20.0.0/16']);
    expect((await server.admin('GET', `/keys/${key.body.id}`)).body.network_scope).toEqual(['wiki.corp.example', '10.20.0.0/16']);
  });

  it('stores a scope given to a key in its canonical form', async () => {
    const { keyId, accountId } = await server.account({}, { network_scope: ['127.0.0.1', '::ffff:10.0.0.0/104'] });
    expect((await server.admin('GET', `/keys/${keyId}`)).body.network_scope).toEqual(['127.0.0.1', '10.0.0.0/8']);
    const listed = (await server.admin('GET', `/accounts/${accountId}/keys`)).body.keys;
    expect(listed[0].network_scope).toEqual(['127.0.0.1', '10.0.0.0/8']);
  });

  it.each([['intranet'], [['http://wiki.corp.example/']], [['0x7f.1']], [[]], [[42]]])('answers 400 naming network_scope for %j', async (scope) => {
    const { keyId, accountId } = await server.account();
    const patched = await server.admin('PATCH', `/keys/${keyId}`, { network_scope: scope });
    expect(patched.status).toBe(400);
    expect(patched.body.message).toMatch(/network_scope/);
    expect((await server.admin('POST', `/accounts/${accountId}/keys`, { network_scope: scope })).status).toBe(400);
  });
});
