import fs from 'node:fs';
import net from 'node:net';

/** Where Linux's ephemeral ports begin when /proc does not say (its default). */
const EPHEMERAL_START = 32_768;
/** The ports below the ephemeral range that closedPort() tries, from the highest down. */
const CANDIDATES = 64;
/** Ports below this are privileged: closedPort()'s candidates stay above them. */
const FIRST_UNPRIVILEGED = 1_024;

/**
 * A port free on 127.0.0.1 now, for a child process to listen on a moment later. It is one of the
 * kernel's ephemeral ports, which another server may take in that moment: for a port that must
 * stay closed, closedPort().
 */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

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
  for (let port = start - 1; port >= start - CANDIDATES; port--) {
    if (await refuses(port)) return port;
  }
  throw new Error(`every port from ${start - CANDIDATES} to ${start - 1} on 127.0.0.1 accepts connections: no closed port to test with`);
}

function ephemeralStart(): number {
  try {
    const first = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first - CANDIDATES >= FIRST_UNPRIVILEGED ? first : EPHEMERAL_START;
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
