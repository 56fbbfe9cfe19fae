import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { appMissing } from '../helpers/apps.js';
import { clearOfMidnight } from '../helpers/clear-of-midnight.js';
import { account, admin, adminToken, type ClusterNode, ClusterNodes, endedJobs, killWhileCapturing, postInWaves, v1 } from '../helpers/cluster-nodes.js';
import { type HeldImages, startHeldImages } from '../helpers/held-images.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { SECRET_TEXT, startSignedInWiki } from '../helpers/signed-in-wiki.js';
import { tempDir } from '../helpers/temp-dir.js';

// Three server processes on one PostgreSQL server, as three machines of a cluster would run:
// each its own data directory, all one database and one files directory.

const JOBS = 60;
/** A node that dies loses its jobs to the others this many seconds later. */
const LEASE_SECONDS = 3;

let postgres: TestPostgres;
let database: string;
let fixtures: FixtureServer;
let heldImages: HeldImages;
let filesDir: string;
let cluster: ClusterNodes;
let nodes: ClusterNode[];

/** Webhooks as the receiver gets them: every POST, by job, with its webhook-id. */
const received = new Map<string, Array<{ id: string; type: string }>>();
let receiver: http.Server;
let hookUrl: string;

// Its tests count calls across the nodes, up to the last one: the whole file runs on one UTC day.
beforeAll(() => clearOfMidnight(5 * 60_000), 5 * 60_000 + 5_000);

beforeAll(async () => {
  postgres = await startPostgres();
  database = await postgres.createDatabase();
  fixtures = await startFixtureServer();
  heldImages = await startHeldImages();
  filesDir = await tempDir('sa-shared-files-');
  cluster = new ClusterNodes({ database, files: filesDir, leaseSeconds: LEASE_SECONDS });
  nodes = cluster.nodes;
  receiver = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      const event = JSON.parse(text) as { type: string; data: { job_id: string } };
      received.set(event.data.job_id, [...(received.get(event.data.job_id) ?? []), { id: String(req.headers['webhook-id']), type: event.type }]);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  // The first node migrates the schema and makes the admin token; the others find both.
  await cluster.start();
  await Promise.all([cluster.start(), cluster.start()]);
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await fixtures?.close();
  await heldImages?.close();
  await postgres?.stop();
  await fs.rm(filesDir, { recursive: true, force: true });
}, 60_000);

describe('a cluster of three nodes on one PostgreSQL', () => {
  it('shares one admin token, which every node accepts', async () => {
    const tokens = await Promise.all(nodes.map(adminToken));
    expect(new Set(tokens).size).toBe(1);
    for (const node of nodes) expect((await admin(node, 'GET', '/accounts')).status).toBe(200);
    expect(new Set(nodes.map((n) => n.name)).size).toBe(3);
  });

  it.skipIf(appMissing('dokuwiki'))('signs in once across the nodes for captures that need the same saved login at once', async () => {
    const wiki = await startSignedInWiki();
    try {
      const { key, accountId } = await account(nodes[0]);
      const created = await v1(nodes[0], key, 'POST', '/logins', wiki.login());
      expect(created.status).toBe(201);
      const login = ((await created.json()) as { id: string }).id;
      // Two jobs a node, all at once: each node has captures needing the login before any sign-in ends.
      const ids = await postInWaves(nodes, key, 6, 6, () => ({ url: wiki.securePage, login }));
      const ended = await endedJobs(nodes, key, accountId, ids);
      expect(ended.map((job) => job.status)).toEqual(ids.map(() => 'completed'));
      for (const [i, id] of ids.entries()) {
        const job = (await (await v1(nodes[i % nodes.length], key, 'GET', `/screenshot/${id}?include_source=1`)).json()) as { page_source: string };
        expect(job.page_source).toContain(SECRET_TEXT);
      }
      expect(wiki.signIns()).toBe(1);
    } finally {
      await wiki.stop();
    }
  });

  it("runs each monitor's occurrence once across the nodes, and missed ones as one check", async () => {
    const { key } = await account(nodes[0]);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await v1(nodes[i % 3], key, 'POST', '/monitors', { url: `${fixtures.url}/small.html?monitor=${i}`, schedule: { every_minutes: 1 }, propose_masks: false });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    // As if every node had been down for five minutes: five occurrences missed, all three
    // schedulers looking every second for what is due.
    const db = new pg.Client({ connectionString: database });
    await db.connect();
    try {
      const missed = Date.now() - 5 * 60_000;
      await db.query(`UPDATE monitors SET doc = jsonb_set(doc, '{next_run_at}', to_jsonb($1::bigint)) WHERE id = ANY($2)`, [missed, ids]);
      const checksOf = async () =>
        (await db.query<{ monitor_id: string; occurrence: string }>(`SELECT monitor_id, doc->>'occurrence' AS occurrence FROM monitor_checks WHERE monitor_id = ANY($1)`, [ids])).rows;
      await expect.poll(async () => (await checksOf()).length, { timeout: 30_000, interval: 250 }).toBeGreaterThanOrEqual(ids.length);
      await new Promise((r) => setTimeout(r, 3000)); // three more looks of every node
      const checks = await checksOf();
      expect(checks.map((c) => c.monitor_id).sort()).toEqual([...ids].sort());
      expect(new Set(checks.map((c) => Number(c.occurrence)))).toEqual(new Set([missed]));
      // The next occurrence is the first one to come, on the schedule's phase.
      const next = (await db.query<{ next_run_at: string }>(`SELECT next_run_at FROM monitors WHERE id = ANY($1)`, [ids])).rows;
      for (const row of next) {
        expect(Number(row.next_run_at)).toBeGreaterThan(missed + 4 * 60_000);
        expect(Number(row.next_run_at)).toBeLessThanOrEqual(Date.now() + 60_000);
        expect((Number(row.next_run_at) - missed) % 60_000).toBe(0);
      }
    } finally {
      await db.end();
    }
  }, 60_000);

  it('runs every job exactly once, posted round-robin, with one node killed mid-capture', async () => {
    const { key, accountId } = await account(nodes[0]);
    // Each page waits for its image, which the test holds until the third node is dead: no
    // capture can end before the kill, so the node dies inside those it has begun.
    const page = (n: number) => `${fixtures.url}/embed-image.html?src=${encodeURIComponent(`${heldImages.url}/${n}.png`)}&n=${n}`;
    // Five requests per node at a time, a wave a second: within the per-node rate limit of 10 a second.
    const ids = await postInWaves(nodes, key, JOBS, 15, (n) => ({ url: page(n), callback_url: hookUrl }));
    // Kill the third node while it holds a job it is capturing.
    await killWhileCapturing(database, nodes[2], () => heldImages.release());

    const survivors = nodes.slice(0, 2);
    const statuses = await endedJobs(survivors, key, accountId, ids);
    expect(statuses.filter((s) => s.status !== 'completed')).toEqual([]);

    // One webhook per job: every job's end was stored and announced once. Delivery is at least
    // once (a node killed after the receiver's answer and before storing it leaves the delivery
    // to another node, under the same webhook-id), so deliveries are told apart by their id, not
    // counted by POST; an end stored twice with another outcome would be a delivery of its own.
    const deliveries = (job: string) => new Map((received.get(job) ?? []).map((w) => [w.id, w.type]));
    await expect.poll(() => ids.filter((id) => deliveries(id).size > 0).length, { timeout: 30_000 }).toBe(JOBS);
    await new Promise((r) => setTimeout(r, 2000)); // time for a second delivery of a job to show up
    for (const id of ids) expect([...deliveries(id).values()]).toEqual(['screenshot.completed']);
    expect(new Set([...received.values()].flat().map((w) => w.id)).size).toBe(JOBS);

    // Usage is exact: sixty calls, whichever node counted them.
    for (const node of survivors) {
      const usage = (await (await v1(node, key, 'GET', '/usage')).json()) as { calls_today: number };
      expect(usage.calls_today).toBe(JOBS);
    }

    // Every image, from every surviving node, whichever node took it.
    for (const job of statuses) {
      const route = new URL(job.screenshot_url!).pathname;
      for (const node of survivors) {
        const res = await fetch(`${node.url}${route}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('image/png');
        await res.arrayBuffer();
      }
    }
  }, 300_000);

  it('sends, from a live node and once, the webhook of a job a dead node ended without storing its delivery', async () => {
    // What a node killed between storing a job's end and storing its delivery leaves behind.
    const db = new pg.Client({ connectionString: database });
    await db.connect();
    const orphanId = `orphan${Date.now()}`;
    try {
      const { rows } = await db.query<{ doc: Record<string, unknown> }>(`SELECT doc FROM jobs WHERE status = 'completed' LIMIT 1`);
      const doc = { ...rows[0].doc, _id: orphanId, webhook_due: true, callback_url: hookUrl, completed_at: Date.now() - 60_000, lease_owner: 'node-gone' };
      await db.query('INSERT INTO jobs (id, doc) VALUES ($1, $2::jsonb)', [orphanId, JSON.stringify(doc)]);
    } finally {
      await db.end();
    }
    await expect.poll(() => received.get(orphanId)?.length ?? 0, { timeout: 30_000, interval: 250 }).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 6000)); // one more look of every node finds it sent
    expect(received.get(orphanId)?.map((w) => w.type)).toEqual(['screenshot.completed']);
  }, 60_000);

  it('admits exactly the daily limit of a burst spread over the nodes', async () => {
    const survivors = nodes.slice(0, 2);
    const { key } = await account(survivors[0], { daily_limit: 7 });
    // Six a node, within the per-second limit: only the daily limit refuses.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => v1(survivors[i % 2], key, 'POST', '/screenshot', { url: `${fixtures.url}/small.html` })),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(7);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  }, 60_000);

  it('takes a settings change made on one node on the others within seconds', async () => {
    const [first, second] = nodes;
    expect((await admin(first, 'PUT', '/settings', { retention_days: 11 })).status).toBe(200);
    await expect.poll(async () => (await admin(second, 'GET', '/settings')).body.retention_days, { timeout: 10_000 }).toBe(11);
  });

  it('stops a node gracefully, saying how many jobs wait in the shared store', async () => {
    const second = nodes[1];
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(second.stderr()).toMatch(/stopped cleanly; \d+ jobs re-queued/);
  });
});
