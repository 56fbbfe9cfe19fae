import fs from 'node:fs/promises';
import path from 'node:path';

import { progressView } from './progress.js';
import { UsageError, wholeNumber } from './usage-error.js';
import { call } from './v1-client.js';

export interface CaptureCommandOptions {
  devices?: string[];
  fullPage?: boolean;
  format?: string;
  quality?: string;
  out?: string;
  server: string;
  key?: string;
  /** Seconds to wait for every job. */
  timeout?: string;
  /** A saved login of the key's account (`login_…`) the page is captured with. */
  login?: string;
}

interface CreatedJob {
  job_id: string;
  device: string;
  status_url: string;
}

/** One job as GET /v1/screenshot/{id} answers it (the fields read here). */
interface JobStatus {
  status: 'pending' | 'processing' | 'completed' | 'failed';
  progress: number;
  created_at: string;
  screenshot_url?: string;
  error?: string;
}

const EXTENSIONS: Record<string, string> = { png: 'png', jpeg: 'jpg', webp: 'webp', pdf: 'pdf' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `example.com-desktop-20261123-101500.png`: the host, the device and the job's creation time (UTC). */
export function fileNameFor(url: string, device: string, createdAt: string, format: string): string {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '').replace(/[^a-zA-Z0-9.-]/g, '_');
  } catch {
    host = 'page';
  }
  const stamp = createdAt.replace(/-/g, '').replace(' ', '-').replace(/:/g, '');
  return `${host || 'page'}-${device}-${stamp}.${EXTENSIONS[format] ?? format}`;
}

/** A name in `dir` not taken yet: `name`, else `name-2`, `name-3`… before the extension. */
async function freeName(dir: string, name: string): Promise<string> {
  const ext = path.extname(name);
  const stem = name.slice(0, -ext.length);
  for (let n = 1; ; n++) {
    const candidate = path.join(dir, n === 1 ? name : `${stem}-${n}${ext}`);
    try {
      await fs.access(candidate);
    } catch {
      return candidate;
    }
  }
}

/**
 * Writes the saved files' paths in the order the devices were asked for, whatever order their
 * captures end in: a path waits until every device before it has been saved or has failed, so a
 * script reading one path a line can rely on the order.
 */
class RequestOrder {
  private readonly settled: (string | null | undefined)[];
  private next = 0;

  constructor(
    private readonly out: NodeJS.WritableStream,
    count: number,
  ) {
    this.settled = new Array(count).fill(undefined);
  }

  /** Job `k` has ended: with the path it was saved under, or without one when it failed. */
  settle(k: number, file?: string): void {
    this.settled[k] = file ?? null;
    while (this.next < this.settled.length && this.settled[this.next] !== undefined) {
      const ready = this.settled[this.next++];
      if (ready) this.out.write(`${ready}\n`);
    }
  }
}

/**
 * `capture URL`: creates the jobs through the running server's v1 API, follows them, and saves
 * each image in `--out` under a readable name. Progress goes to stderr (a bar per device on a
 * terminal, plain lines otherwise); stdout gets only the saved files' paths, one a line, in the
 * order the devices were asked for (`all`: desktop, tablet, mobile).
 * Resolves to the number of jobs that failed.
 */
export async function captureCommand(url: string, options: CaptureCommandOptions, stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream & { isTTY?: boolean }): Promise<number> {
  if (!options.key) throw new UsageError('an API key is needed: --key sa_… or SCREENSHOT_API_KEY');
  const server = options.server.replace(/\/+$/, '');
  const devices = (options.devices ?? ['desktop']).flatMap((d) => d.split(',')).map((d) => d.trim()).filter(Boolean);
  const format = options.format ?? 'png';
  const timeoutMs = (wholeNumber('timeout', options.timeout) ?? 300) * 1000;
  const outDir = path.resolve(options.out ?? '.');
  await fs.mkdir(outDir, { recursive: true });

  const created = await call(server, options.key, 'POST', '/screenshot', {
    url,
    devices,
    full_page: options.fullPage ?? false,
    format,
    ...(options.quality === undefined ? {} : { quality: wholeNumber('quality', options.quality) }),
    ...(options.login === undefined ? {} : { login: options.login }),
  });
  if (created.status !== 201) throw new UsageError(`${created.body?.error ?? created.status}: ${created.body?.message ?? ''}`);
  const jobs = created.body.jobs as CreatedJob[];
  const view = progressView(stderr, jobs.map((j) => j.device));
  const deadline = Date.now() + timeoutMs;
  let failed = 0;
  const paths = new RequestOrder(stdout, jobs.length);
  const follow = async (job: CreatedJob, k: number) => {
    for (;;) {
      const res = await call(server, options.key!, 'GET', `/screenshot/${job.job_id}`);
      if (res.status === 429) {
        await sleep(Math.max(1, res.retryAfter) * 1000);
        continue;
      }
      if (res.status !== 200) throw new UsageError(`${res.body?.error ?? res.status}: ${res.body?.message ?? ''}`);
      const status = res.body as JobStatus;
      if (status.status === 'failed') {
        failed++;
        view.update(job.device, 'failed', 0, status.error ?? '');
        paths.settle(k);
        return;
      }
      if (status.status === 'completed' && status.screenshot_url) {
        const image = await fetch(status.screenshot_url, { signal: AbortSignal.timeout(60_000) });
        if (!image.ok) throw new UsageError(`could not download ${job.device}'s image: HTTP ${image.status}`);
        const file = await freeName(outDir, fileNameFor(url, job.device, status.created_at, format));
        await fs.writeFile(file, Buffer.from(await image.arrayBuffer()), { flag: 'wx' });
        view.update(job.device, 'saved', 100, path.basename(file));
        paths.settle(k, file);
        return;
      }
      view.update(job.device, status.status, status.progress);
      if (Date.now() > deadline) {
        failed++;
        view.update(job.device, 'gave up', status.progress, `still ${status.status} after ${timeoutMs / 1000} s`);
        paths.settle(k);
        return;
      }
      await sleep(400);
    }
  };
  // One device after another keeps the polling within the account's requests per second.
  await Promise.all(jobs.map((job, k) => sleep(k * 130).then(() => follow(job, k))));
  view.finish();
  return failed;
}
