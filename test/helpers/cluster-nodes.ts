import fs from 'node:fs/promises';
import path from 'node:path';

import pg from 'pg';
import { expect } from 'vitest';

import { serve, type ServeProcess } from './cli-process.js';
import { tempDir } from './temp-dir.js';

/** A `serve` process of the cluster: its own data directory, and the node name it took. */
export interface ClusterNode extends ServeProcess {
  dataDir: string;
  name: string;
}

export interface ClusterOptions {
  /** The PostgreSQL database every node shares (`--database`). */
  database: string;
  /** The files every node shares (`--files`): a directory, or `s3://bucket/prefix`. */
  files: string;
  /** Seconds after which a dead node's jobs go to the others (SCREENSHOT_JOB_LEASE_SECONDS). */
  leaseSeconds: number;
  /** More environment for every node (object storage's endpoint and credentials). */
  env?: Record<string, string>;
}

export interface EndedJob {
  status: string;
  screenshot_url?: string;
  error?: string;
}

/**
 * Server processes of one cluster, as separate machines would run them: each with its own data
 * directory, all on one database and one files location, two captures at a time in one browser.
 * `stop()` ends every node still running and removes every directory made.
 */
export class ClusterNodes {
  readonly nodes: ClusterNode[] = [];
  private readonly dirs: string[] = [];

  constructor(private readonly options: ClusterOptions) {}

  /** The arguments of a node on `files` (the cluster's own by default), in a new data directory. */
  async argsFor(files = this.options.files): Promise<{ args: string[]; dataDir: string }> {
    const dataDir = await tempDir('sa-node-');
    this.dirs.push(dataDir);
    return { dataDir, args: ['--data', dataDir, '--database', this.options.database, '--files', files, '--egress-allow', '127.0.0.1/32', '--concurrency', '2', '--browsers', '1'] };
  }

  /** Starts `serve` with `args` (argsFor's unless given) and the cluster's environment. */
  serve(args: string[]): Promise<ServeProcess> {
    return serve(args, 60_000, { SCREENSHOT_JOB_LEASE_SECONDS: String(this.options.leaseSeconds), ...this.options.env });
  }

  /** Starts one more node, once it listens. */
  async start(): Promise<ClusterNode> {
    const { args, dataDir } = await this.argsFor();
    const proc = await this.serve(args);
    const name = /this node is (\S+) of the cluster/.exec(proc.stderr())?.[1] ?? '';
    const node = { ...proc, dataDir, name };
    this.nodes.push(node);
    return node;
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) {
      node.child.kill('SIGTERM');
      await node.exited;
    }
    for (const dir of this.dirs) await fs.rm(dir, { recursive: true, force: true });
  }
}

export const adminToken = (node: { dataDir: string }): Promise<string> => fs.readFile(path.join(node.dataDir, 'admin-token'), 'utf8').then((t) => t.trim());

/** Calls a node's admin API with the cluster's admin token. */
export async function admin(node: ClusterNode, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${node.url}/admin/api${route}`, {
    method,
    headers: { authorization: `Bearer ${await adminToken(node)}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Calls a node's v1 API with a key. */
export const v1 = (node: ServeProcess, key: string, method: string, route: string, body?: unknown): Promise<Response> =>
  fetch(`${node.url}/v1${route}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** Makes a verified account (with `limits`) and a key for it through a node. */
export async function account(node: ClusterNode, limits: { daily_limit?: number } = {}): Promise<{ key: string; accountId: string }> {
  const created = await admin(node, 'POST', '/accounts', { email: `team-${Math.random().toString(36).slice(2)}@example.com`, email_verified: true, ...limits });
  expect(created.status).toBe(201);
  const key = await admin(node, 'POST', `/accounts/${created.body.id}/keys`, { name: 'cluster' });
  expect(key.status).toBe(201);
  return { key: key.body.key, accountId: created.body.id };
}

/**
 * Posts `count` screenshot requests round-robin over `nodes`, `perWave` at a time and a wave a
 * second (keep `perWave / nodes.length` under the per-node rate of 10 a second); `body(n)` is the
 * n-th request. Returns the job ids in the order posted.
 */
export async function postInWaves(nodes: ClusterNode[], key: string, count: number, perWave: number, body: (n: number) => unknown): Promise<string[]> {
  const ids: string[] = [];
  for (let wave = 0; wave * perWave < count; wave++) {
    const posted = await Promise.all(
      Array.from({ length: Math.min(perWave, count - wave * perWave) }, async (_, i) => {
        const n = wave * perWave + i;
        const res = await v1(nodes[n % nodes.length], key, 'POST', '/screenshot', body(n));
        expect(res.status).toBe(201);
        return ((await res.json()) as { job_id: string }).job_id;
      }),
    );
    ids.push(...posted);
    await new Promise((r) => setTimeout(r, 1000));
  }
  return ids;
}

/**
 * Kills `victim` (SIGKILL) once it holds a job it is capturing, and checks it died holding one;
 * `release()` then lets the held captures end. The pages must be held (their load waits for the
 * test) so that no capture can end between the look and the kill.
 */
export async function killWhileCapturing(database: string, victim: ClusterNode, release: () => void): Promise<void> {
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
    release();
  }
}

/**
 * Waits until all `ids` of the account have ended (the admin job list, which is not rate
 * limited, tells), then reads each job's status from the `survivors` in turn, gently.
 */
export async function endedJobs(survivors: ClusterNode[], key: string, accountId: string, ids: string[]): Promise<EndedJob[]> {
  const ended = async () =>
    ((await admin(survivors[0], 'GET', `/jobs?account_id=${accountId}&limit=100`)).body.jobs as Array<{ status: string }>).filter(
      (j) => j.status === 'completed' || j.status === 'failed',
    ).length;
  await expect.poll(ended, { timeout: 120_000, interval: 500 }).toBe(ids.length);
  const statuses: EndedJob[] = [];
  for (const [i, id] of ids.entries()) {
    statuses.push(await (await v1(survivors[i % survivors.length], key, 'GET', `/screenshot/${id}`)).json());
    await new Promise((r) => setTimeout(r, 120));
  }
  return statuses;
}
