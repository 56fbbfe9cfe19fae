import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

import { S3Client } from '@aws-sdk/client-s3';

import type { EgressPolicy, EgressTarget } from '../egress/policy.js';
import type { OpenDestination } from './destinations.js';

/** Longest wait for a connection to the destination, and for each answer of it. */
export interface S3Timeouts {
  /** @default 10000 */
  connectMs?: number;
  /** @default 60000 */
  requestMs?: number;
}

/**
 * An S3 client for a customer's destination whose every connection goes where the egress guard
 * allows, as a webhook's does (webhooks/sender.ts): the endpoint is checked once and the client
 * talks to the URL the guard canonicalised (so an IP literal is connected as the very address
 * checked, whatever its spelling: decimal, hex, IPv4-mapped), and every name the client resolves
 * is answered by the guard's vetted address: the endpoint's own as checked, or, for a
 * virtual-hosted bucket (`bucket.endpoint`), that name checked on its own. The name is never
 * resolved again between the check and the connect. Throws the guard's EgressDeniedError
 * (or HostNotFoundError) when the endpoint may not be reached.
 */
export async function guardedS3Client(destination: OpenDestination, policy: EgressPolicy, timeouts: S3Timeouts = {}): Promise<S3Client> {
  const { record, credentials } = destination;
  const checked = await policy.checkUrl(record.endpoint);
  const port = checked.url.port ? Number(checked.url.port) : checked.url.protocol === 'https:' ? 443 : 80;
  const lookup: LookupFunction = (hostname, options, callback) => {
    const answer = (target: EgressTarget) => {
      if (options.all) callback(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    if (hostname.toLowerCase().replace(/\.+$/, '') === checked.url.hostname) return answer(checked);
    policy.checkHost(hostname, port).then(answer, (err: Error) => callback(err as NodeJS.ErrnoException, '', 4));
  };
  const agent = { lookup, keepAlive: false };
  return withoutNodeVersionWarning(
    () =>
      new S3Client({
        endpoint: checked.url.href.replace(/\/+$/, ''),
        region: record.region,
        forcePathStyle: record.path_style,
        credentials: { accessKeyId: credentials.access_key_id, secretAccessKey: credentials.secret_access_key },
        // One more try for a passing fault; the job does not wait long for a destination that is down.
        maxAttempts: 2,
        requestHandler: {
          httpAgent: new http.Agent(agent),
          httpsAgent: new https.Agent(agent),
          connectionTimeout: timeouts.connectMs ?? 10_000,
          requestTimeout: timeouts.requestMs ?? 60_000,
        },
      }),
  );
}

/**
 * Makes the SDK's client without its NodeVersionSupportWarning (it announces a future Node
 * requirement on every Node 20 process, once, when a client is made); every other warning passes.
 */
function withoutNodeVersionWarning<T>(make: () => T): T {
  const emit = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.startsWith('NodeVersionSupportWarning')) return;
    (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return make();
  } finally {
    process.emitWarning = emit;
  }
}
