import { describe, expect, it } from 'vitest';

import { stillClock } from '../helpers/still-clock.js';
import { testServerForFile } from '../helpers/test-server.js';

// A JSON-RPC batch (the transport takes up to 100 messages in one POST) against the per-account
// requests per second: each request in it counts as if it had come alone.

const time = stillClock();
const server = testServerForFile({ ratePerSecond: 3 }, { clock: time.clock });

const REFUSAL = 'Rate limit exceeded: Too many requests: the limit is 3 requests per second per account';

interface Answer {
  id: number;
  result?: { isError?: boolean; content?: Array<{ type: string; text?: string }>; tools?: unknown[] };
  error?: { code: number; message: string; data?: { retry_after?: number } };
}

/** POSTs `messages` to /v1/mcp as one batch. */
function post(key: string, messages: unknown[]): Promise<Response> {
  return fetch(`${server.url}/v1/mcp`, {
    method: 'POST',
    headers: {
      'x-api-key': key,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify(messages),
  });
}

/** The JSON-RPC answers of a batch's event stream, in the order of their ids. */
async function answersOf(res: Response): Promise<Answer[]> {
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.length > 6)
    .map((line) => JSON.parse(line.slice(6)) as Answer)
    .sort((a, b) => a.id - b.id);
}

const request = (id: number, method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method, params });
const textOf = (answer: Answer) => (answer.result?.content ?? []).map((c) => c.text ?? '').join('\n');

describe('a batch of MCP calls', () => {
  it('spends one request per second for each call: the tool calls past the limit are tool errors saying so, and make no job', async () => {
    const { key } = await server.account();
    const html = '<!doctype html><body style="margin:0;background:#0c0"><p>one small page</p></body>';
    const calls = [1, 2, 3, 4, 5].map((id) => request(id, 'tools/call', { name: 'take_screenshot', arguments: { html } }));
    // Every request of a batch is counted as it is dispatched, before the answer's headers go
    // out; the captures that follow need no still clock.
    const answers = await answersOf(await time.still(() => post(key, calls)));
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3, 4, 5]);
    for (const answer of answers.slice(0, 3)) {
      expect(answer.result?.isError).toBeFalsy();
      expect(textOf(answer)).toMatch(/^status: completed$/m);
    }
    for (const answer of answers.slice(3)) {
      expect(answer.result).toEqual({ isError: true, content: [{ type: 'text', text: REFUSAL }] });
    }
    expect((await (await server.v1('GET', '/usage', key)).json()).calls_today).toBe(3);
  }, 180_000);

  it('refuses any other request past the limit with a JSON-RPC error saying so', async () => {
    const { key } = await server.account();
    const answers = await answersOf(await time.still(() => post(key, [1, 2, 3, 4, 5].map((id) => request(id, 'tools/list')))));
    expect(answers.slice(0, 3).map((a) => a.result?.tools?.length)).toEqual([4, 4, 4]);
    for (const answer of answers.slice(3)) {
      expect(answer.error).toEqual({ code: -32000, message: REFUSAL, data: { retry_after: 1 } });
    }
  });

  it('spends one request for each request of a batch and none for its notifications', async () => {
    const { key } = await server.account();
    const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
    const statuses = await time.still(async () => {
      const answers = await answersOf(await post(key, [initialized, initialized, request(1, 'ping'), request(2, 'ping')]));
      expect(answers.map((a) => a.result)).toEqual([{}, {}]);
      // Two of the three requests of the second are spent: one more passes, the next is refused.
      const after = [await server.v1('GET', '/usage', key), await server.v1('GET', '/usage', key)];
      return after.map((res) => res.status);
    });
    expect(statuses).toEqual([200, 429]);
  });
});
