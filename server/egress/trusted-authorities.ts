import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';

import { ConfigError } from '../config.js';

/**
 * Certificate authorities the service trusts besides the system's (`--ca-file`): a company's
 * private CA, for its intranet sites, webhook receivers and buckets. They are added to the
 * system's roots, never put in their place, and verification stays on for every connection.
 */
export interface TrustedAuthorities {
  /** Each certificate, PEM, in the order of the files. */
  certificates: string[];
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Reads PEM bundles, each holding one certificate or more. A file that cannot be read, holds no
 * certificate, or holds one that does not parse stops the start with a ConfigError naming it.
 */
export function readAuthorities(files: readonly string[]): TrustedAuthorities {
  const certificates = files.flatMap((file) => {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`--ca-file ${file} cannot be read: ${(err as Error).message}`);
    }
    const blocks = text.match(PEM_BLOCK) ?? [];
    if (blocks.length === 0) throw new ConfigError(`--ca-file ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    for (const [i, block] of blocks.entries()) {
      try {
        new crypto.X509Certificate(block);
      } catch (err) {
        throw new ConfigError(`--ca-file ${file}: certificate ${i + 1} does not parse: ${(err as Error).message}`);
      }
    }
    return blocks;
  });
  return { certificates };
}

/**
 * The `ca` option of Node's TLS connections (an https.Agent's): the system's roots and these
 * authorities; undefined when there are none, which leaves Node's own default.
 */
export function nodeCa(authorities: TrustedAuthorities | undefined): string[] | undefined {
  if (!authorities?.certificates.length) return undefined;
  return [...tls.rootCertificates, ...authorities.certificates];
}

/** Whether a server's chain (PEM, its own certificate first) is trusted for `host` at `now`. */
export type ChainChecker = (chain: readonly string[], host: string, now?: Date) => boolean;

/** Longest chain a server may send that is followed to one of the authorities. */
export const MAX_CHAIN = 8;

/** A certificate in force at `now`. */
const inForce = (cert: crypto.X509Certificate, now: Date) => new Date(cert.validFrom) <= now && now <= new Date(cert.validTo);

/** `cert` was issued and signed by `issuer`. */
const issuedBy = (cert: crypto.X509Certificate, issuer: crypto.X509Certificate) => cert.checkIssued(issuer) && cert.verify(issuer.publicKey);

/**
 * A check of a server's chain against the authorities, for a browser that cannot be given them
 * another way (the desktop app's Chromium, whose Linux NSS database is the user's own): the
 * chain (PEM, the server's certificate first, then the intermediates it sent) is trusted when
 * the server's certificate names `host` (a name, or an IP address, IPv6 with or without its
 * brackets), every certificate is in force, each one is signed by the next, the intermediates
 * are authorities, and the last one followed was issued by one of `authorities` (in force too).
 * The authorities are parsed once, here.
 */
export function chainChecker(authorities: TrustedAuthorities): ChainChecker {
  const roots = authorities.certificates.map((pem) => new crypto.X509Certificate(pem));
  return (chain, host, now = new Date()) => {
    let certs: crypto.X509Certificate[];
    try {
      certs = chain.slice(0, MAX_CHAIN).map((pem) => new crypto.X509Certificate(pem));
    } catch {
      return false;
    }
    const [leaf] = certs;
    if (!leaf) return false;
    const name = host.replace(/^\[(.*)\]$/, '$1');
    const named = net.isIP(name) ? leaf.checkIP(name) : leaf.checkHost(name, { wildcards: true, partialWildcards: false });
    if (!named) return false;
    for (const [i, cert] of certs.entries()) {
      if (!inForce(cert, now)) return false;
      if (roots.some((root) => inForce(root, now) && issuedBy(cert, root))) return true;
      const next = certs[i + 1];
      if (!next?.ca || !issuedBy(cert, next)) return false;
    }
    return false;
  };
}
