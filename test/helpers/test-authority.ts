import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A certificate authority made for one test, and a server certificate it issued. */
export interface TestAuthority {
  /** The authority's certificate, PEM, in `dir`. */
  caFile: string;
  /** The server's key and certificate, PEM, for `https.createServer`. */
  key: string;
  cert: string;
}

/**
 * Makes, with openssl in `dir`, an authority and a certificate it issued for 127.0.0.1 and the
 * given names (valid for a day).
 */
export async function makeTestAuthority(dir: string, names: string[] = []): Promise<TestAuthority> {
  const at = (file: string) => path.join(dir, file);
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir, timeout: 30_000 });
  await openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Test Authority',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  const sans = ['IP:127.0.0.1', ...names.map((name) => `DNS:${name}`)].join(',');
  await fs.writeFile(at('server.ext'), `subjectAltName=${sans}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  await openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'server.ext');
  return { caFile: at('ca.pem'), key: await fs.readFile(at('server.key'), 'utf8'), cert: await fs.readFile(at('server.pem'), 'utf8') };
}
