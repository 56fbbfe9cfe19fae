import type { AddressInfo } from 'node:net';
import net from 'node:net';

/** The server name (SNI) of a TLS ClientHello, or null when there is none. */
export function serverNameOf(hello: Buffer): string | null {
  if (hello[0] !== 0x16 || hello[5] !== 0x01) return null; // handshake record, ClientHello
  let at = 9 + 2 + 32; // record and handshake headers, client version, random
  at += 1 + hello[at]; // session id
  at += 2 + hello.readUInt16BE(at); // cipher suites
  at += 1 + hello[at]; // compression methods
  const end = at + 2 + hello.readUInt16BE(at);
  at += 2;
  while (at + 4 <= end && at + 4 <= hello.length) {
    const type = hello.readUInt16BE(at);
    const length = hello.readUInt16BE(at + 2);
    if (type === 0) return hello.subarray(at + 9, at + 9 + hello.readUInt16BE(at + 7)).toString('latin1');
    at += 4 + length;
  }
  return null;
}

/** A TCP server on 127.0.0.1 that reads each TLS ClientHello, records its server name and hangs up. */
export async function startHelloRecorder(): Promise<{ port: number; names: Array<string | null>; close(): Promise<void> }> {
  const names: Array<string | null> = [];
  const server = net.createServer((socket) => {
    socket.once('data', (chunk) => {
      names.push(serverNameOf(chunk));
      socket.destroy();
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    names,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
