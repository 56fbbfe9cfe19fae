import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { chainChecker } from '../../server/egress/trusted-authorities.js';
import { tempDir } from '../helpers/temp-dir.js';
import { makeTestAuthority, type TestAuthority } from '../helpers/test-authority.js';

// The desktop app's browser cannot be given the --ca-file authorities in an NSS database of its
// own, so it asks chainChecker about a chain its roots did not trust. Real chains, made with openssl.

const run = promisify(execFile);

let ours: TestAuthority;
let theirs: TestAuthority;
/** A server certificate for intermediate.test signed by an intermediate authority that `ours` issued, and that intermediate. */
let viaIntermediate: { leaf: string; intermediate: string };
/** A certificate for rogue.test signed with the key of ours.cert, a server certificate (CA:FALSE). */
let rogue: string;

async function issueThroughIntermediate(dir: string): Promise<{ leaf: string; intermediate: string }> {
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir, timeout: 30_000 });
  await fs.writeFile(path.join(dir, 'inter.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n');
  await fs.writeFile(path.join(dir, 'leaf.ext'), 'subjectAltName=DNS:intermediate.test\nbasicConstraints=CA:FALSE\n');
  await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'inter.key', '-out', 'inter.csr', '-subj', '/CN=Test Intermediate');
  await openssl('x509', '-req', '-in', 'inter.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'inter.pem', '-days', '1', '-extfile', 'inter.ext');
  await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=intermediate.test');
  await openssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'inter.pem', '-CAkey', 'inter.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '1', '-extfile', 'leaf.ext');
  await fs.writeFile(path.join(dir, 'rogue.ext'), 'subjectAltName=DNS:rogue.test\nbasicConstraints=CA:FALSE\n');
  await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'rogue.key', '-out', 'rogue.csr', '-subj', '/CN=rogue.test');
  await openssl('x509', '-req', '-in', 'rogue.csr', '-CA', 'server.pem', '-CAkey', 'server.key', '-CAcreateserial', '-out', 'rogue.pem', '-days', '1', '-extfile', 'rogue.ext');
  rogue = await fs.readFile(path.join(dir, 'rogue.pem'), 'utf8');
  return { leaf: await fs.readFile(path.join(dir, 'leaf.pem'), 'utf8'), intermediate: await fs.readFile(path.join(dir, 'inter.pem'), 'utf8') };
}

let dirs: string[] = [];
beforeAll(async () => {
  dirs = await Promise.all([tempDir('chain-ours-'), tempDir('chain-theirs-')]);
  const [oursDir, theirsDir] = dirs;
  [ours, theirs] = await Promise.all([makeTestAuthority(oursDir, ['secure.test']), makeTestAuthority(theirsDir)]);
  viaIntermediate = await issueThroughIntermediate(oursDir);
}, 60_000);
afterAll(async () => {
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

const checkerOf = async (authority: TestAuthority) => chainChecker({ certificates: [await fs.readFile(authority.caFile, 'utf8')] });

describe('a chain checked against the --ca-file authorities', () => {
  it('is trusted when our authority issued the server certificate for the host asked, by name or by address', async () => {
    const trusted = await checkerOf(ours);
    expect(trusted([ours.cert], 'secure.test')).toBe(true);
    expect(trusted([ours.cert], 'SECURE.TEST')).toBe(true);
    expect(trusted([ours.cert], '127.0.0.1')).toBe(true);
  });

  it('is refused for a host the certificate does not name, even on the same address', async () => {
    const trusted = await checkerOf(ours);
    expect(trusted([ours.cert], 'other.test')).toBe(false);
    expect(trusted([ours.cert], 'sub.secure.test')).toBe(false);
    expect(trusted([ours.cert], '127.0.0.2')).toBe(false);
    expect(trusted([ours.cert], '[::1]')).toBe(false);
  });

  it('is refused when another authority issued it', async () => {
    expect((await checkerOf(theirs))([ours.cert], 'secure.test')).toBe(false);
    expect((await checkerOf(ours))([theirs.cert], '127.0.0.1')).toBe(false);
  });

  it('follows an intermediate the server sends, and is refused without it', async () => {
    const trusted = await checkerOf(ours);
    expect(trusted([viaIntermediate.leaf, viaIntermediate.intermediate], 'intermediate.test')).toBe(true);
    expect(trusted([viaIntermediate.leaf], 'intermediate.test')).toBe(false);
  });

  it('is refused when a server certificate is not an authority but signs the next one', async () => {
    // ours.cert is a server certificate (CA:FALSE) our authority issued: what its key signed is not trusted.
    const trusted = await checkerOf(ours);
    expect(trusted([rogue, ours.cert], 'rogue.test')).toBe(false);
  });

  it('is refused out of its validity, and for what does not parse', async () => {
    const trusted = await checkerOf(ours);
    expect(trusted([ours.cert], 'secure.test', new Date(Date.now() + 5 * 86_400_000))).toBe(false);
    expect(trusted([ours.cert], 'secure.test', new Date(Date.now() - 5 * 86_400_000))).toBe(false);
    expect(trusted(['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'], 'secure.test')).toBe(false);
    expect(trusted([], 'secure.test')).toBe(false);
  });
});
