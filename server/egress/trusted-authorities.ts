import crypto from 'node:crypto';
import fs from 'node:fs';
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
