import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Resolver } from '../../server/egress/policy.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

// An `html` job without base_url is rendered at http://html.invalid/, a name no DNS answers
// (RFC 6761): what its relative addresses ask for must fail at once, without a lookup.

let server: TestServer;
let key: string;
/** Every name the egress guard asked to resolve. */
const asked: string[] = [];

beforeAll(async () => {
  const resolve: Resolver = async (host) => {
    asked.push(host);
    throw Object.assign(new Error(`no DNS in this test (${host})`), { code: 'ENOTFOUND' });
  };
  server = await startTestServer({ ratePerSecond: 1000 }, { resolve });
  key = (await server.account()).key;
});
afterAll(async () => {
  await server?.close();
});

describe('an html job at its default address', () => {
  it('renders, and its relative addresses load nothing without a DNS lookup of html.invalid', async () => {
    const html =
      '<link rel="stylesheet" href="style.css"><script src="app.js"></script>' +
      '<body style="margin:0;background:#0f0"><img src="img/pic.png" width="10" height="10"><iframe src="/frame.html"></iframe>';
    const res = await server.v1('POST', '/screenshot', key, { html });
    expect(res.status).toBe(201);
    const job = await waitForJob(server, key, (await res.json()).job_id);
    expect(job).toMatchObject({ status: 'completed', final_url: 'http://html.invalid/' });
    expect(job.warnings.map((w: { code: string }) => w.code)).toContain('images_not_loaded');
    // (The browser's own background requests, for its update service, are other names.)
    expect(asked.filter((host) => host.endsWith('.invalid'))).toEqual([]);
  });
});
