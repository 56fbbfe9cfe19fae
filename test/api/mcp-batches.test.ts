import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FakeCaptureEngine } from '../helpers/fake-capture-engine.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// start_batch and read_batch through the SDK's own client, against a real server and store with
// a scripted engine (every capture a page captured well).

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ ratePerSecond: 100 }, { engine: new FakeCaptureEngine() });
});
afterAll(async () => {
  await server?.close();
});

async function call(key: string, name: string, args: Record<string, unknown>): Promise<string> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/v1/mcp`), { requestInit: { headers: { 'X-API-Key': key } } }));
  try {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    return `${result.isError ? 'error: ' : ''}${result.content.map((c) => (c as { text: string }).text).join('\n')}`;
  } finally {
    await client.close();
  }
}

/** Denied by the egress policy (the test server allows 127.0.0.1 only): such a job fails as soon as it runs. */
const DENIED = 'http://127.0.0.2:1/';

describe('the MCP batch tools', () => {
  it('start_batch queues the pages as one counted batch, and read_batch follows it to its end with its failures', async () => {
    const { key } = await server.account();
    const started = await call(key, 'start_batch', { urls: ['http://127.0.0.1:9/a', DENIED, 'http://127.0.0.1:9/c'], device: 'mobile' });
    const id = /^batch_id: (batch_[0-9a-f]{24})$/m.exec(started)?.[1];
    expect(id, started).toBeDefined();
    expect(started).toContain('total: 3');
    await expect.poll(() => call(key, 'read_batch', { batch_id: id })).toMatch(/^status: completed$/m);
    const read = await call(key, 'read_batch', { batch_id: id });
    expect(read).toContain('completed: 2, failed: 1, processing: 0, pending: 0');
    expect(read).toContain(`archive_url: ${server.url}/v1/batches/${id}/archive`);
    expect(read).toMatch(new RegExp(`^failed item 1: ${DENIED}: blocked by egress policy`, 'm'));
    expect((await (await server.v1('GET', '/usage', key)).json()).calls_today).toBe(3);
  });

  it("answers another account's batch, and a bad page, as tool errors", async () => {
    const owner = await server.account();
    const other = await server.account();
    const id = /batch_id: (\S+)/.exec(await call(owner.key, 'start_batch', { urls: ['http://127.0.0.1:9/a'] }))![1];
    expect(await call(other.key, 'read_batch', { batch_id: id })).toBe(`error: Not found: No batch ${id}`);
    expect(await call(owner.key, 'start_batch', { urls: ['ftp://example.test/'] })).toBe('error: Bad request: items[0].url: url must use the scheme http:// or https://');
  });
});
