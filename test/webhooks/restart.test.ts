import { type ChildProcess,execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { createEgressPolicy } from '../../server/egress/policy.js';
import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import { createWebhookService, type WebhookService } from '../../server/webhooks/webhook-service.js';
import { type Receiver,startReceiver } from './receiver.js';

const repo = path.resolve(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(what: string, check: () => Promise<boolean> | boolean, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await sleep(25);
  }
}

describe('webhook deliveries across a killed process', () => {
  let build: string;
  let dir: string;
  let child: ChildProcess | undefined;
  let receiver: Receiver | undefined;
  let restarted: WebhookService | undefined;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;

  // The service runs in a real child process so it can be killed with SIGKILL; it is compiled
  // with the project's TypeScript compiler because plain Node cannot run .ts files.
  beforeAll(async () => {
    build = await fs.mkdtemp(path.join(os.tmpdir(), 'webhook-restart-build-'));
    await promisify(execFile)(
      process.execPath,
      [
        path.join(repo, 'node_modules/typescript/bin/tsc'),
        '--ignoreConfig',
        ...['--outDir', build, '--rootDir', repo, '--module', 'nodenext', '--moduleResolution', 'nodenext'],
        ...['--target', 'es2022', '--skipLibCheck', '--esModuleInterop', '--types', 'node'],
        path.join(repo, 'test/webhooks/restart-child.ts'),
      ],
      { cwd: repo, timeout: 60_000 },
    );
    await fs.writeFile(path.join(build, 'package.json'), '{"type":"module"}');
    await fs.symlink(path.join(repo, 'node_modules'), path.join(build, 'node_modules'));
  });

  afterAll(async () => {
    if (build) await fs.rm(build, { recursive: true, force: true });
  });

  afterEach(async () => {
    child?.kill('SIGKILL');
    await restarted?.stop();
    await receiver?.close();
    restarted = receiver = child = undefined;
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  async function runChild(args: { url: string; schedule: number[]; jobId: string }) {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'webhook-restart-'));
    const file = path.join(dir, 'webhooks.db');
    const proc = spawn(process.execPath, [path.join(build, 'test/webhooks/restart-child.js'), JSON.stringify({ ...args, file, secret })], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child = proc;
    let out = '';
    proc.stdout?.on('data', (chunk) => (out += chunk));
    await waitUntil('the child to notify', () => out.includes('notified'));
    return { proc, file };
  }

  async function kill(proc: ChildProcess) {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  }

  async function restart(file: string, now: () => number = Date.now) {
    const { deliveries } = await openNedbStores(path.dirname(file), silentLogger);
    restarted = createWebhookService({
      store: deliveries,
      policy: createEgressPolicy({ allow: ['127.0.0.1/32'], denyLan: false }),
      secrets: async () => [secret],
      clock: { now },
    });
    await restarted.start();
    return restarted;
  }

  it('makes again an attempt that was cut off when the process was killed, with the same id', async () => {
    receiver = await startReceiver(['hang'], { fallback: 200 });
    const { proc, file } = await runChild({ url: receiver.url, schedule: [3_600_000], jobId: 'job_killed' });
    await receiver.waitFor(1);
    await kill(proc);

    const service = await restart(file);
    await receiver.waitFor(2);
    await waitUntil('the delivery to succeed', async () => (await service.list({}))[0]?.status === 'succeeded');
    const [delivery] = await service.list({ job_id: 'job_killed' });
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([delivery.id, delivery.id]);
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0].status_code).toBe(200);
  });

  it('resumes a delivery waiting for a retry hours away once that time has come', async () => {
    receiver = await startReceiver([500], { fallback: 200 });
    const { proc, file } = await runChild({ url: receiver.url, schedule: [3_600_000], jobId: 'job_waiting' });
    await receiver.waitFor(1);
    await waitUntil('the failed attempt to be written', async () => (await fs.readFile(file, 'utf8')).includes('"scheduled_attempts":1'));
    await kill(proc);

    // Restarted an hour later: nothing is due before then, the retry is due after.
    const early = await restart(file);
    await sleep(300);
    expect(receiver.received).toHaveLength(1);
    const [waiting] = await early.list({});
    expect(waiting.status).toBe('pending');
    await early.stop();

    const later = await restart(file, () => Date.now() + 2 * 3_600_000);
    await receiver.waitFor(2);
    await waitUntil('the delivery to succeed', async () => (await later.list({}))[0]?.status === 'succeeded');
    const [delivery] = await later.list({ job_id: 'job_waiting' });
    expect(delivery.attempts.map((a) => a.status_code)).toEqual([500, 200]);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([delivery.id]));
  });
});
