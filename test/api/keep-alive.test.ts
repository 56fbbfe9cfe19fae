import http from 'node:http';
import type { Socket } from 'node:net';

import { describe, expect, it } from 'vitest';

import { testServerForFile } from '../helpers/test-server.js';

const server = testServerForFile();

/** GET `path` through `agent`; resolves with the answer's status, its Keep-Alive header and the socket it came on. */
function get(agent: http.Agent, path: string): Promise<{ status: number; keepAlive: string | undefined; socket: Socket }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${server.url}${path}`, { agent }, (res) => {
        // Taken now: the agent detaches the socket from the answer once it is read.
        const socket = res.socket;
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, keepAlive: res.headers['keep-alive'] as string | undefined, socket }));
      })
      .on('error', reject);
  });
}

describe('keep-alive', () => {
  it('announces an idle time-out longer than the 60 s load balancers keep connections', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const { keepAlive } = await get(agent, '/healthz');
      expect(Number(/timeout=(\d+)/.exec(keepAlive ?? '')?.[1])).toBeGreaterThan(60);
    } finally {
      agent.destroy();
    }
  });

  it('keeps an idle connection open past 6 s and answers the next request on it', async () => {
    // A client that keeps its idle connections 10 s, longer than the 4 s a Node client gave
    // itself under the old 5 s time-out; the server must not be the one to close first.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, timeout: 10_000 });
    try {
      const first = await get(agent, '/healthz');
      let closed = false;
      first.socket.once('close', () => (closed = true));
      await new Promise((resolve) => setTimeout(resolve, 6_500));
      expect(closed).toBe(false);
      const second = await get(agent, '/healthz');
      expect(second.status).toBe(200);
      expect(second.socket).toBe(first.socket);
    } finally {
      agent.destroy();
    }
  });
});
