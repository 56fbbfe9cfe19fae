import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import net from 'node:net';

import { afterAll, describe, expect, it } from 'vitest';

import { closedPort } from './ports.js';

describe('closedPort', () => {
  const servers: net.Server[] = [];
  afterAll(() => Promise.all(servers.map((server) => new Promise((done) => server.close(done)))));

  it('is a loopback port that refuses connections', async () => {
    const port = await closedPort();
    const refused = await new Promise<string | undefined>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => resolve(void socket.destroy()));
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  // A port found by listening on 0 and closing again was taken, in CI, by a server of another
  // test file before its case connected: "closed the connection" instead of "refused".
  it('lies outside the range from which servers listening on port 0 get theirs', async () => {
    const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const port = await closedPort();
    for (let i = 0; i < 50; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      expect((server.address() as AddressInfo).port).toBeGreaterThanOrEqual(low!);
    }
    expect(port).toBeLessThan(low!);
  });
});
