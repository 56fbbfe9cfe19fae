import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';

import { S3Client } from '@aws-sdk/client-s3';

import type { EgressPolicy, EgressTarget } from '../egress/policy.js';
import { carriedAgentClass, type UpstreamProxy } from '../egress/upstream-proxy.js';
import { quietNodeVersionWarning } from '../store/s3/s3-client.js';
import type { OpenDestination } from './destinations.js';

/** Longest wait for a connection to the destination, and for each answer of it. */
export interface S3Timeouts {
  /** @default 10000 */
  connectMs?: number;
  /** @default 60000 */
  requestMs?: number;
}

/**
 * An S3 client for a customer's destination (over HTTPS trusting `ca`, when given: nodeCa) whose every connection goes where the egress guard
 * allows, as a webhook's does (webhooks/sender.ts): the endpoint is checked once and the client
 * talks to the URL the guard canonicalised (so an IP literal is connected as the very address
 * checked, whatever its spelling: decimal, hex, IPv4-mapped), and every name the client resolves
 * is answered by the guard's vetted address: the endpoint's own as checked, or, for a
 * virtual-hosted bucket (`bucket.endpoint`), that name checked on its own. The name is never
 * resolved again between the check and the connect. Throws the guard's EgressDeniedError
 * (or HostNotFoundError) when the endpoint may not be reached.
 *
 * `close()` ends the client for good: its connections are cut and no new one is made. The SDK's
 * single PUT and multipart parts take no abort signal, so this is what stops an upload at once.
 */
export async function guardedS3Client(destination: OpenDestination, policy: EgressPolicy, timeouts: S3Timeouts = {}, route: OutgoingRoute = {}): Promise<GuardedS3> {
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
  const agents = { lookup, keepAlive: false };
  const httpAgent = new (closable(carriedAgentClass(http.Agent, route.upstream, false)))(agents);
  const httpsAgent = new (closable(carriedAgentClass(https.Agent, route.upstream, true)))({ ...agents, ca: route.ca });
  quietNodeVersionWarning();
  const client = new S3Client({
    endpoint: checked.url.href.replace(/\/+$/, ''),
    region: record.region,
    forcePathStyle: record.path_style,
    credentials: { accessKeyId: credentials.access_key_id, secretAccessKey: credentials.secret_access_key },
    // Checksums only where the API requires them, as for the service's own bucket: not every
    // S3-compatible store takes the SDK's default trailing checksums.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // One more try for a passing fault; the job does not wait long for a destination that is down.
    maxAttempts: 2,
    requestHandler: {
      httpAgent,
      httpsAgent,
      connectionTimeout: timeouts.connectMs ?? 10_000,
      requestTimeout: timeouts.requestMs ?? 60_000,
    },
  });
  return {
    client,
    close() {
      httpAgent.close();
      httpsAgent.close();
      client.destroy();
    },
  };
}

/** How a destination is reached besides the egress guard: the authorities its certificate may come from, and the company's proxy. */
export interface OutgoingRoute {
  /** The system's roots and `--ca-file`'s (nodeCa). @default Node's roots */
  ca?: string[];
  /** `--proxy`, which carries each connection the guard allowed. @default none: direct */
  upstream?: UpstreamProxy;
}

/** A client of a destination, and the way to end it and its connections. */
export interface GuardedS3 {
  client: S3Client;
  close(): void;
}

/** Thrown at a request the SDK makes after its client was closed (its retry, the next part). */
export class ClientClosedError extends Error {
  override readonly name = 'ClientClosedError';
  constructor() {
    super('the upload was stopped');
  }
}

/** An agent class whose connections can be cut by `close()`, after which it makes none. */
// A mixin's base must be a constructor of `any[]` arguments (TypeScript's rule for mixins).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function closable<A extends new (...args: any[]) => http.Agent>(Agent: A) {
  return class extends Agent {
    private closed = false;
    override createConnection(options: http.ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
      if (!this.closed) return super.createConnection(options, callback);
      process.nextTick(() => callback?.(new ClientClosedError(), undefined as unknown as Duplex));
      return undefined;
    }
    close(): void {
      this.closed = true;
      this.destroy();
    }
  };
}

