import { afterEach, describe, expect, it, vi } from 'vitest';

import { BrowserCrashedError, CaptureError, PageCrashedError } from '../../server/capture/engine.js';
import { StoppedServiceError } from '../../server/jobs/job-failure.js';
import { MAX_RUNS_AFTER_A_STOP } from '../../server/jobs/job-run.js';
import { JobRunner } from '../../server/jobs/job-runner.js';
import { capturedPage } from '../helpers/fake-capture-engine.js';
import { fakeJobCore } from '../helpers/fake-job-core.js';
import { pendingJob } from '../helpers/fake-job-store.js';

// The run of a job from `processing` to its end, with a fake store, engine and files: its steps
// in order, the retry after a browser crash, and each way a step fails.

let runner: JobRunner | undefined;
afterEach(async () => {
  await runner?.stop(0);
  runner = undefined;
});

/** Runs the core's stored jobs to their ends (one node, one slot). */
async function runAll(core: ReturnType<typeof fakeJobCore>): Promise<void> {
  runner = new JobRunner(core.deps);
  await runner.recover();
  await vi.waitFor(() => expect(runner!.queue.depth()).toBe(0));
  // The end is announced after the slot frees.
  await new Promise((resolve) => setImmediate(resolve));
}

describe('a job whose capture succeeds', () => {
  it('is stored processing and counted as a start before its capture, then completed with its image', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1' })]);
    await runAll(core);
    const job = core.store.job('j1');
    expect(core.store.changesOf('j1', 'status')).toEqual(['processing', 'completed']);
    expect(core.store.updates[0].change).toMatchObject({ status: 'processing', starts: 1 });
    expect(job).toMatchObject({ status: 'completed', progress: 100, attempts: 1, starts: 1, http_status: 200, page_title: 'Example' });
    expect(core.files.images.get(job.image_file!)?.toString()).toBe('picture');
    expect(core.files.thumbnails.has(job.image_file!)).toBe(true);
    expect(core.files.sources.get('j1')).toBe('<title>Example</title>');
    expect(core.announced.map((j) => j._id)).toEqual(['j1']);
  });

  it('keeps no page source larger than the bound', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1' })], [capturedPage({ html: 'x'.repeat(20) })], { pageSourceMaxBytes: 10 });
    await runAll(core);
    expect(core.store.job('j1').has_page_source).toBe(false);
    expect(core.files.sources.size).toBe(0);
  });

  it('is stored with its webhook due when it has a callback_url, and without the mark when not', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'hook', callback_url: 'https://example.com/hook' }), pendingJob({ _id: 'quiet', created_at: 2_000 })]);
    await runAll(core);
    expect(core.store.job('hook').webhook_due).toBe(true);
    expect(core.store.job('quiet').webhook_due).toBeUndefined();
  });

  it('erases its sealed secrets before its end is announced', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1', has_secrets: true })]);
    core.jobSecrets.sealed.set('j1', JSON.stringify({ headers: { 'x-token': 'abc' } }));
    await runAll(core);
    expect(core.engine.requests[0].options).toMatchObject({ headers: { 'x-token': 'abc' } });
    expect(core.jobSecrets.removed).toEqual(['j1']);
  });
});

describe('a job whose capture fails', () => {
  it('fails with the page error message, is captured once and keeps no files', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1' })], [new CaptureError('The page did not load: net::ERR_NAME_NOT_RESOLVED')]);
    await runAll(core);
    expect(core.store.job('j1')).toMatchObject({ status: 'failed', error: 'The page did not load: net::ERR_NAME_NOT_RESOLVED', image_file: null });
    expect(core.engine.requests).toHaveLength(1);
    expect(core.failures).toEqual([expect.any(CaptureError)]);
    expect(core.announced.map((j) => j.status)).toEqual(['failed']);
  });

  it('is captured again after one browser crash, and completes', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1' })], [new BrowserCrashedError('gone'), capturedPage()]);
    await runAll(core);
    expect(core.engine.requests).toHaveLength(2);
    expect(core.store.job('j1')).toMatchObject({ status: 'completed', attempts: 2 });
    expect(core.failures).toEqual([]);
  });

  it('fails after a second browser crash, saying it was tried twice', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1' })], [new BrowserCrashedError('gone'), new BrowserCrashedError('gone again'), capturedPage()]);
    await runAll(core);
    expect(core.engine.requests).toHaveLength(2);
    expect(core.store.job('j1')).toMatchObject({ status: 'failed', attempts: 2, error: 'The browser crashed while capturing the page (tried twice)' });
  });

  it('fails after its page crashed twice, naming the page', async () => {
    const url = 'https://example.com/heavy';
    const core = fakeJobCore([pendingJob({ _id: 'j1', url })], [new PageCrashedError(url), new PageCrashedError(url)]);
    await runAll(core);
    expect(core.store.job('j1').error).toBe(`The page crashed while capturing ${url} (tried twice)`);
  });

  it('fails without a capture when the URL guard refuses the address', async () => {
    const guard = { checkUrl: () => Promise.reject(new CaptureError('The address is not allowed')) };
    const core = fakeJobCore([pendingJob({ _id: 'j1' })], [], { guard });
    await runAll(core);
    expect(core.engine.requests).toHaveLength(0);
    expect(core.store.job('j1')).toMatchObject({ status: 'failed', error: 'The address is not allowed' });
  });

  it('fails saying so when its sealed values are no longer kept', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1', has_secrets: true, secret_names: { headers: ['x-token'], cookies: [], http_auth: false } })]);
    await runAll(core);
    expect(core.engine.requests).toHaveLength(0);
    expect(core.store.job('j1').error).toMatch(/^The job's headers, cookies or credentials are no longer kept/);
  });

  it('hides an unexpected error behind a plain message', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1' })], [new TypeError('cannot read properties of undefined')]);
    await runAll(core);
    expect(core.store.job('j1').error).toBe('The capture failed unexpectedly');
  });

  it('removes the image it stored when the end cannot be stored, and keeps the end for the disk', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1' })]);
    // processing, attempts and progress 90 are stored; the completed end is refused (a full disk), and so is its failure.
    const original = core.store.update.bind(core.store);
    core.store.update = (id, change, holder) =>
      change.status === 'completed' || change.status === 'failed' ? Promise.reject(Object.assign(new Error('no space'), { code: 'ENOSPC' })) : original(id, change, holder);
    await runAll(core);
    expect(core.files.removed.map(([, id]) => id)).toEqual(['j1']);
    expect(core.ends.isUnsaved('j1')).toBe(true);
    expect(core.ends.overlay(core.store.job('j1'))).toMatchObject({ status: 'failed', error: 'Could not store the screenshot: the disk is full' });
    expect(core.announced).toEqual([]);
  });
});

describe('a job stopped with its service', () => {
  it(`fails without a capture once it was under way at ${MAX_RUNS_AFTER_A_STOP + 1} stops`, async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1', status: 'processing', starts: MAX_RUNS_AFTER_A_STOP + 1 })]);
    await runAll(core);
    expect(core.engine.requests).toHaveLength(0);
    expect(core.store.job('j1')).toMatchObject({ status: 'failed', error: new StoppedServiceError(MAX_RUNS_AFTER_A_STOP + 1).message });
  });

  it(`runs again when it was under way at ${MAX_RUNS_AFTER_A_STOP} stops`, async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1', status: 'processing', starts: MAX_RUNS_AFTER_A_STOP })]);
    await runAll(core);
    expect(core.store.changesOf('j1', 'status')).toEqual(['pending', 'processing', 'completed']);
    expect(core.store.job('j1').starts).toBe(MAX_RUNS_AFTER_A_STOP + 1);
  });

  it('goes back to pending, its attempts and starts as they were, when shutdown aborts its capture', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1', attempts: 1, starts: 1 })], ['held']);
    runner = new JobRunner(core.deps);
    await runner.recover();
    await vi.waitFor(() => expect(core.engine.holding()).toBe(1));
    expect(core.store.job('j1')).toMatchObject({ status: 'processing', attempts: 2, starts: 2 });
    await runner.stop(0);
    expect(core.store.job('j1')).toMatchObject({ status: 'pending', progress: 0, attempts: 1, starts: 1 });
    expect(core.failures).toEqual([]);
    expect(core.announced).toEqual([]);
  });

  it('is not run when it has ended already', async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1', status: 'completed' })]);
    runner = new JobRunner(core.deps);
    runner.queue.enqueue(core.store.job('j1'));
    await vi.waitFor(() => expect(runner!.queue.depth()).toBe(0));
    expect(core.engine.requests).toHaveLength(0);
    expect(core.store.updates).toEqual([]);
  });
});

describe('a job run by a node of a cluster', () => {
  const cluster = { node: 'node-a', leaseMs: 30_000, pollMs: 60_000 };

  it("stores nothing of its end once another node holds its lease", async () => {
    const core = fakeJobCore([pendingJob({ _id: 'j1' })], ['held'], { cluster });
    runner = new JobRunner(core.deps);
    await runner.recover();
    await vi.waitFor(() => expect(core.engine.holding()).toBe(1));
    // node-a's lease ran out and node-b claimed the job.
    core.store.jobs.get('j1')!.lease_owner = 'node-b';
    core.engine.release();
    await vi.waitFor(() => expect(runner!.queue.depth()).toBe(0));
    expect(core.store.job('j1')).toMatchObject({ status: 'processing', lease_owner: 'node-b' });
    expect(core.failures).toEqual([]);
    expect(core.files.removed.map(([, id]) => id)).toEqual(['j1']);
  });
});
