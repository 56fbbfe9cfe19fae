import fs from 'node:fs/promises';
import path from 'node:path';

import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { serve, type ServeProcess } from '../helpers/cli-process.js';
import { type HeldImages, startHeldImages } from '../helpers/held-images.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { S3_CREDENTIALS, startS3, type TestS3 } from '../helpers/s3rver.js';
import { tempDir } from '../helpers/temp-dir.js';

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
const nodes: Array<ServeProcess & { dataDir: string; name: string }> = [];
const dirs: string[] = [];

const nodeEnv = () => ({ ...S3_CREDENTIALS, SCREENSHOT_S3_ENDPOINT: s3.endpoint, SCREENSHOT_JOB_LEASE_SECONDS: String(LEASE_SECONDS) });

async function nodeArgs(files: string): Promise<{ args: string[]; dataDir: string }> {
  const dataDir = await tempDir('sa-s3-node-');
  dirs.push(dataDir);
  return { dataDir, args: ['--data', dataDir, '--database', database, '--files', files, '--egress-allow', '127.0.0.1/32', '--concurrency', '2', '--browsers', '1'] };
}

async function startNode(): Promise<(typeof nodes)[number]> {
  const { args, dataDir } = await nodeArgs(FILES);
  const proc = await serve(args, 60_000, nodeEnv());
  const name = /this node is (\S+) of the cluster/.exec(proc.stderr())?.[1] ?? '';
  const node = { ...proc, dataDir, name };
  nodes.push(node);
  return node;
}

const adminToken = (node: { dataDir: string }) => fs.readFile(path.join(node.dataDir, 'admin-token'), 'utf8').then((t) => t.trim());

async function admin(node: (typeof nodes)[number], method: string, route: string, body?: unknown) {
  const res = await fetch(`${node.url}/admin/api${route}`, {
    method,
    headers: { authorization: `Bearer ${await adminToken(node)}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const v1 = (node: ServeProcess, key: string, method: string, route: string, body?: unknown) =>
  fetch(`${node.url}/v1${route}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  postgres = await startPostgres();
  database = await postgres.createDatabase();
  fixtures = await startFixtureServer();
  heldImages = await startHeldImages();
  s3 = await startS3(['shots']);
  // The first node migrates the schema and writes the files marker into the bucket; the others find both.
  await startNode();
  await Promise.all([startNode(), startNode()]);
}, 180_000);

afterAll(async () => {
  for (const node of nodes) {
    node.child.kill('SIGTERM');
    await node.exited;
  }
  await fixtures?.close();
  await heldImages?.close();
  await s3?.close();
  await postgres?.stop();
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
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

    const { args } = await nodeArgs('s3://shots/elsewhere');
    const refusal = await serve(args, 60_000, nodeEnv()).then(
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
    const created = await admin(nodes[0], 'POST', '/accounts', { email: `s3-${Date.now()}@example.com`, email_verified: true });
    const keyed = await admin(nodes[0], 'POST', `/accounts/${created.body.id}/keys`, { name: 'cluster' });
    const key = keyed.body.key as string;
    // Each page waits for its image, which the test holds until the third node is dead: no
    // capture can end before the kill, so the node dies inside those it has begun.
    const page = (n: number) => `${fixtures.url}/embed-image.html?src=${encodeURIComponent(`${heldImages.url}/${n}.png`)}&n=${n}`;
    const ids: string[] = [];
    for (let wave = 0; wave < JOBS / 12; wave++) {
      const posted = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const n = wave * 12 + i;
          const res = await v1(nodes[n % 3], key, 'POST', '/screenshot', { url: page(n) });
          expect(res.status).toBe(201);
          return ((await res.json()) as { job_id: string }).job_id;
        }),
      );
      ids.push(...posted);
      await new Promise((r) => setTimeout(r, 1000));
    }

    // Kill the third node while it holds a job it is capturing.
    const victim = nodes[2];
    const db = new pg.Client({ connectionString: database });
    await db.connect();
    try {
      const capturing = async () =>
        (await db.query(`SELECT count(*)::int AS n FROM jobs WHERE status = 'processing' AND doc->>'lease_owner' = $1`, [victim.name])).rows[0].n;
      await expect.poll(capturing, { timeout: 60_000, interval: 50 }).toBeGreaterThan(0);
      victim.child.kill('SIGKILL');
      await victim.exited;
      expect(await capturing()).toBeGreaterThan(0);
    } finally {
      await db.end();
      heldImages.release();
    }

    const survivors = nodes.slice(0, 2);
    const ended = async () =>
      ((await admin(survivors[0], 'GET', `/jobs?account_id=${created.body.id}&limit=100`)).body.jobs as Array<{ status: string }>).filter(
        (j) => j.status === 'completed' || j.status === 'failed',
      ).length;
    await expect.poll(ended, { timeout: 120_000, interval: 500 }).toBe(JOBS);
    const statuses: Array<{ status: string; screenshot_url?: string; error?: string }> = [];
    for (const [i, id] of ids.entries()) {
      statuses.push(await (await v1(survivors[i % 2], key, 'GET', `/screenshot/${id}`)).json());
      await new Promise((r) => setTimeout(r, 120));
    }
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
