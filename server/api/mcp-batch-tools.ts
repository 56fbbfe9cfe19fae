import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import { MAX_BATCH_ITEMS } from '../contract/batches.js';
import { batchArchiveUrl, batchStatus, batchStatusUrl } from '../jobs/batch-resource.js';
import type { BatchService } from '../jobs/batch-service.js';
import { statusUrl } from '../jobs/job-resource.js';
import { parseBatchParams } from './batch-params.js';
import { type McpCaller, toolRefusal } from './mcp-tools.js';
import type { V1Deps } from './v1-jobs.js';

/** Failed items read_batch lists at most. */
const MAX_LISTED_FAILURES = 20;

/** What the batch tools are given beyond the v1 chain's deps. */
export interface McpBatchDeps extends V1Deps {
  batches: BatchService;
}

const text = (lines: string[]): CallToolResult => ({ content: [{ type: 'text', text: lines.join('\n') }] });

/**
 * start_batch and read_batch: a batch as POST /v1/batches makes it (validated whole, counted one
 * call an item, fed by the fair queue), and its progress as GET /v1/batches/{id} shows it. An
 * agent starts one, reads it until it has ended, then fetches archive_url.
 */
export function registerMcpBatchTools(server: McpServer, deps: McpBatchDeps, caller: McpCaller): void {
  server.registerTool(
    'start_batch',
    {
      title: 'Start a batch of screenshots',
      description:
        `Queues screenshots of up to ${MAX_BATCH_ITEMS} pages at once and returns at once with the batch's id; read its progress with read_batch, ` +
        'then download every image with manifest.json and manifest.csv as one ZIP from its archive_url. Each page counts as one screenshot call of the API key.',
      inputSchema: {
        urls: z.array(z.string().min(1)).min(1).max(MAX_BATCH_ITEMS).describe('the http:// or https:// addresses of the pages'),
        device: z.enum(['desktop', 'tablet', 'mobile']).optional().describe('viewport preset for every page (default desktop)'),
        full_page: z.boolean().optional().describe('capture whole pages (default false)'),
        format: z.enum(['png', 'jpeg', 'webp']).optional().describe('image format (default png)'),
      },
    },
    async ({ urls, device, full_page, format }) => {
      try {
        const { account, key } = caller.state;
        const body = { items: urls.map((url) => ({ url })), devices: [device ?? 'desktop'], full_page: full_page ?? false, format: format ?? 'png' };
        const params = parseBatchParams(body);
        const items = 'items' in params ? params.items : [];
        const batch = await deps.batches.create(account._id, key._id, items, { callback_url: null, base_url: caller.base }, (count, make) =>
          deps.quota.chargeFor(account, count, make),
        );
        return text([`batch_id: ${batch._id}`, `total: ${batch.total}`, `status_url: ${batchStatusUrl(caller.base, batch._id)}`, `archive_url: ${batchArchiveUrl(caller.base, batch._id)}`]);
      } catch (err) {
        return toolRefusal(err);
      }
    },
  );

  server.registerTool(
    'read_batch',
    {
      title: 'Read a batch',
      description: "A batch's progress: its status, counts by state, the time left, its failed pages with their errors, and the archive_url of its images.",
      inputSchema: { batch_id: z.string().min(1).describe('the id start_batch returned (batch_…)') },
    },
    async ({ batch_id }) => {
      try {
        const batch = await deps.batches.getOwned(caller.state.account._id, batch_id);
        const view = await deps.batches.view(batch, 1, MAX_BATCH_ITEMS);
        const { counts } = view;
        const failed = view.jobs.filter(({ job }) => job.status === 'failed').slice(0, MAX_LISTED_FAILURES);
        return text([
          `batch_id: ${batch._id}`,
          `status: ${batchStatus(batch, counts.processing)}`,
          `total: ${batch.total}`,
          `completed: ${counts.completed}, failed: ${counts.failed}, processing: ${counts.processing}, pending: ${counts.pending}`,
          `estimated_seconds_left: ${deps.batches.estimateSecondsLeft(batch)}`,
          `archive_url: ${batchArchiveUrl(caller.base, batch._id)}`,
          ...failed.map(({ index, job }) => `failed item ${index}: ${job.url}: ${job.error ?? 'no reason given'} (${statusUrl(caller.base, job._id)})`),
        ]);
      } catch (err) {
        return toolRefusal(err);
      }
    },
  );
}
