import fs from 'node:fs';
import net from 'node:net';

/** Where Linux's ephemeral ports begin when /proc does not say (its default). */
const EPHEMERAL_START = 32_768;

/**
 * A port on 127.0.0.1 that refuses connections for the whole run. A port found free by listening
 * on 0 and closing again is one of the kernel's ephemeral ports, which every server of the suite
 * takes its own from (listening on 0), so a test file running beside it could come to listen
 * there: CI once saw "closed the connection" where a case expected "refused". This port is just
 * below the ephemeral range, where no test listens and the kernel assigns none; it is checked to
 * refuse a connection now, and the next one down is taken when something of the machine's does
 * listen there.
 */
export async function closedPort(): Promise<number> {
  const start = ephemeralStart();
  for (let port = start - 1; port >= start - 64; port--) {
    if (await refuses(port)) return port;
  }
  throw new Error(`every port from ${start - 64} to ${start - 1} on 127.0.0.1 accepts connections: no closed port to test with`);
}

function ephemeralStart(): number {
  try {
    const first = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 1_088 ? first : EPHEMERAL_START;
  } catch {
    return EPHEMERAL_START;
  }
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}
