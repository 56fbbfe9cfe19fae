import fs from 'node:fs/promises';
import path from 'node:path';

import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { account, type ClusterNode, ClusterNodes, endedJobs, killWhileCapturing, postInWaves } from '../helpers/cluster-nodes.js';
import { type HeldImages, startHeldImages } from '../helpers/held-images.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { S3_CREDENTIALS, startS3, type TestS3 } from '../helpers/s3rver.js';

// Three server processes on one PostgreSQL and one bucket (s3rver on 127.0.0.1), as three
// machines of a cluster would run with object storage: each its own data directory, and no
// directory shared by any two of them.

const JOBS = 24;
/** A node that dies loses its jobs to the others this many seconds later. */
const LEASE_SECONDS = 3;
const FILES = 's3://shots/cluster';

let postgres: TestPostgres;
let database: string;
let fixtures: FixtureServer;
let heldImages: HeldImages;
let s3: TestS3;
let cluster: ClusterNodes;
let nodes: ClusterNode[];

beforeAll(async () => {
  postgres = await startPostgres();
  database = await postgres.createDatabase();
  fixtures = await startFixtureServer();
  heldImages = await startHeldImages();
  s3 = await startS3(['shots']);
  const env = { ...S3_CREDENTIALS, SCREENSHOT_S3_ENDPOINT: s3.endpoint };
  cluster = new ClusterNodes({ database, files: FILES, leaseSeconds: LEASE_SECONDS, env });
  nodes = cluster.nodes;
  // The first node migrates the schema and writes the files marker into the bucket; the others find both.
  await cluster.start();
  await Promise.all([cluster.start(), cluster.start()]);
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
  await fixtures?.close();
  await heldImages?.close();
  await s3?.close();
  await postgres?.stop();
}, 60_000);

describe('a cluster of three nodes with its files in object storage', () => {
  it('starts every node on the bucket with no shared directory, and refuses a node given another prefix', async () => {
    expect(new Set(nodes.map((n) => n.name)).size).toBe(3);
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: 'shots', Prefix: 'cluster/.cluster-files-' }));
    expect(listed.Contents ?? []).toHaveLength(1);
    for (const node of nodes) {
      expect(node.stderr()).toContain(`files in object storage: ${FILES}/ at ${s3.endpoint}`);
      // No credential in the log, and no warning about the SDK's Node versions.
      expect(node.stderr()).not.toContain(S3_CREDENTIALS.AWS_SECRET_ACCESS_KEY);
      expect(node.stderr()).not.toContain('NodeVersionSupportWarning');
    }

    const { args } = await cluster.argsFor('s3://shots/elsewhere');
    const refusal = await cluster.serve(args).then(
      (started) => {
        started.child.kill('SIGTERM');
        return null;
      },
      (err: Error) => err.message,
    );
    const errors = refusal!.split('\n').filter((line) => line.startsWith('error:'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/does not share the cluster's files: s3:\/\/shots\/elsewhere\/ lacks the marker .* same --files s3:\/\/bucket\/prefix/);
  }, 120_000);

  it('runs every job once with a node killed mid-capture, and every survivor serves every image from the bucket', async () => {
    const { key, accountId } = await account(nodes[0]);
    // Each page waits for its image, which the test holds until the third node is dead: no
    // capture can end before the kill, so the node dies inside those it has begun.
    const page = (n: number) => `${fixtures.url}/embed-image.html?src=${encodeURIComponent(`${heldImages.url}/${n}.png`)}&n=${n}`;
    const ids = await postInWaves(nodes, key, JOBS, 12, (n) => ({ url: page(n) }));
    // Kill the third node while it holds a job it is capturing.
    await killWhileCapturing(database, nodes[2], () => heldImages.release());

    const survivors = nodes.slice(0, 2);
    const statuses = await endedJobs(survivors, key, accountId, ids);
    expect(statuses.filter((s) => s.status !== 'completed')).toEqual([]);

    // Every image, from every surviving node, whichever node took it: the same bytes.
    for (const job of statuses) {
      const route = new URL(job.screenshot_url!).pathname;
      const bodies: Buffer[] = [];
      for (const node of survivors) {
        const res = await fetch(`${node.url}${route}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('image/png');
        bodies.push(Buffer.from(await res.arrayBuffer()));
      }
      expect(bodies[1].equals(bodies[0])).toBe(true);
    }

    // The images are objects in the bucket (the killed node may have left one of a job it never
    // completed), and in no node's data directory.
    const images = new Set(((await s3.client.send(new ListObjectsV2Command({ Bucket: 'shots', Prefix: 'cluster/files/' }))).Contents ?? []).map((o) => o.Key));
    for (const job of statuses) expect(images.has(`cluster/files/${new URL(job.screenshot_url!).pathname.split('/').pop()}`)).toBe(true);
    for (const node of nodes) await expect(fs.access(path.join(node.dataDir, 'files'))).rejects.toThrow();
  }, 300_000);
});
