import { describe, expect, it } from 'vitest';

import { BrowserCrashedError, CaptureError, PageCrashedError } from '../../server/capture/engine.js';
import { createEgressPolicy, EgressDeniedError, HostNotFoundError } from '../../server/egress/policy.js';
import { failureClass } from '../../server/jobs/job-failure.js';

/** The kind the policy gives its denial of `url`, decided with the denial (never read from its words). */
async function kind(url: string, options: { denyLan?: boolean; port?: number } = {}): Promise<string> {
  const policy = createEgressPolicy({ allow: [], denyLan: options.denyLan ?? false }, { resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
  if (options.port) policy.denyLocalPort(options.port);
  try {
    await policy.checkUrl(url);
  } catch (err) {
    if (err instanceof EgressDeniedError) return err.kind;
    throw err;
  }
  throw new Error(`${url} was allowed`);
}

describe('egress denial labels', () => {
  it('names the kind of range of each denial the policy makes', async () => {
    expect(await kind('http://127.0.0.2/')).toBe('loopback');
    expect(await kind('http://name.example/')).toBe('loopback');
    expect(await kind('http://[::ffff:127.0.0.1]/')).toBe('loopback');
    expect(await kind('http://169.254.169.254/')).toBe('link_local');
    expect(await kind('http://10.1.2.3/', { denyLan: true })).toBe('lan');
    expect(await kind('http://100.64.0.1/', { denyLan: true })).toBe('lan');
    expect(await kind('http://[fd00::1]/', { denyLan: true })).toBe('lan');
    expect(await kind('http://0.0.0.0/')).toBe('special');
    expect(await kind('http://224.0.0.1/')).toBe('special');
    expect(await kind('ftp://example.com/')).toBe('scheme');
    expect(await kind('not a url')).toBe('invalid');
  });

  it("names a denial of the service's own port own_port", async () => {
    expect(await kind('http://127.0.0.1:8123/', { port: 8123 })).toBe('own_port');
  });
});

describe('failure classes', () => {
  const live = new AbortController().signal;
  it('sorts failures by their class', () => {
    expect(failureClass(new CaptureError('Timed out after 30 s loading x'), live)).toBe('page');
    expect(failureClass(new EgressDeniedError('127.0.0.1 is a loopback address', 'loopback'), live)).toBe('egress_denied');
    expect(failureClass(new HostNotFoundError('nonexistent.invalid'), live)).toBe('dns');
    expect(failureClass(new PageCrashedError('http://x/'), live)).toBe('page_crashed');
    expect(failureClass(new BrowserCrashedError('gone'), live)).toBe('browser_crashed');
    expect(failureClass(Object.assign(new Error('no room'), { code: 'ENOSPC' }), live)).toBe('storage');
    expect(failureClass(new TypeError('bug'), live)).toBe('internal');
  });

  it('calls a job stopped by its last-resort deadline a timeout', () => {
    const controller = new AbortController();
    controller.abort(new CaptureError('The capture took too long and was stopped'));
    expect(failureClass(new Error('aborted'), controller.signal)).toBe('timeout');
  });
});
