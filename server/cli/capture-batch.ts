import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebStream } from 'node:stream/web';

import { UsageError, wholeNumber } from './usage-error.js';
import { call } from './v1-client.js';

export interface CaptureBatchOptions {
  /** A file of URLs, one a line (blank lines and `#` comments skipped). */
  from?: string;
  /** A sitemap the server reads instead. */
  sitemap?: string;
  devices?: string[];
  fullPage?: boolean;
  format?: string;
  out?: string;
  server: string;
  key?: string;
  /** Seconds to wait for the whole batch. */
  timeout?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The URLs of a `--from` file: one a line, blank lines and lines starting with `#` skipped. */
export function urlsOfList(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * `capture --from urls.txt` or `capture --sitemap URL`: one batch through the running server
 * (POST /v1/batches: each URL once per device), followed to its end with a progress line on
 * stderr at each change, then its archive saved in `--out` as `<batch_id>.zip`, whose path is
 * the one line on stdout. Resolves to the number of items that failed (or did not end in time).
 */
export async function captureBatchCommand(options: CaptureBatchOptions, stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): Promise<number> {
  if (!options.key) throw new UsageError('an API key is needed: --key sa_… or SCREENSHOT_API_KEY');
  const server = options.server.replace(/\/+$/, '');
  const devices = (options.devices ?? ['desktop']).flatMap((d) => d.split(',')).map((d) => d.trim()).filter(Boolean);
  const timeoutMs = (wholeNumber('timeout', options.timeout) ?? 1800) * 1000;
  const shared = { full_page: options.fullPage ?? false, format: options.format ?? 'png' };
  let body: Record<string, unknown>;
  if (options.sitemap !== undefined) {
    if (devices.length !== 1) throw new UsageError('--sitemap captures on one device: give one --devices');
    body = { sitemap: options.sitemap, devices, ...shared };
  } else {
    const urls = urlsOfList(await fs.readFile(options.from!, 'utf8').catch(() => Promise.reject(new UsageError(`cannot read ${options.from}`))));
    if (urls.length === 0) throw new UsageError(`${options.from} lists no URL`);
    body = { items: urls.flatMap((url) => devices.map((device) => ({ url, devices: [device] }))), ...shared };
  }
  const outDir = path.resolve(options.out ?? '.');
  await fs.mkdir(outDir, { recursive: true });

  const created = await call(server, options.key, 'POST', '/batches', body);
  if (created.status !== 201) throw new UsageError(`${created.body?.error ?? created.status}: ${created.body?.message ?? ''}`);
  const id = created.body.batch_id as string;
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const res = await call(server, options.key, 'GET', `/batches/${id}?per_page=1`);
    if (res.status === 429) {
      await sleep(Math.max(1, res.retryAfter) * 1000);
      continue;
    }
    if (res.status !== 200) throw new UsageError(`${res.body?.error ?? res.status}: ${res.body?.message ?? ''}`);
    const { counts, total, status } = res.body as { counts: Record<string, number>; total: number; status: string };
    const line = `${id}: ${counts.completed + counts.failed}/${total} ended, ${counts.failed} failed, ${status}`;
    if (line !== last) stderr.write(`${line}\n`);
    last = line;
    if (status === 'completed' || status === 'cancelled') break;
    if (Date.now() > deadline) {
      stderr.write(`${id}: gave up after ${timeoutMs / 1000} s; the archive holds what completed so far\n`);
      break;
    }
    await sleep(1000);
  }
  const file = path.join(outDir, `${id}.zip`);
  const archive = await fetch(`${server}/v1/batches/${id}/archive`, { headers: { 'x-api-key': options.key } });
  if (!archive.ok || !archive.body) throw new UsageError(`could not download the archive: HTTP ${archive.status}`);
  await pipeline(Readable.fromWeb(archive.body as WebStream), createWriteStream(file, { flags: 'wx' }));
  stdout.write(`${file}\n`);
  const ended = await call(server, options.key, 'GET', `/batches/${id}?per_page=1`);
  const counts = ended.body?.counts as Record<string, number> | undefined;
  return counts ? counts.failed + counts.pending + counts.processing : 0;
}
