import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import { IMAGE_CONTENT_TYPES } from '../capture/engine.js';
import { htmlToText } from '../capture/outputs/html-text.js';
import { ValidationError } from '../domain-errors.js';
import { evidenceUrl, screenshotUrl, statusUrl } from '../jobs/job-resource.js';
import type { JobRecord } from '../store/records/job-record.js';
import { knownErrorResponse } from './error-responses.js';
import { parseScreenshotParams } from './screenshot-params.js';
import type { V1State } from './v1-auth.js';
import { requestJobs, type V1Deps } from './v1-jobs.js';

/** How long a tool call waits for its job to end before answering with the job still running. */
export const MCP_WAIT_MS = 120_000;
/** Images larger than this are not inlined; the answer gives their screenshot_url instead. */
export const MCP_MAX_INLINE_IMAGE_BYTES = 8 * 1024 * 1024;
/** Characters of page text read_page returns at most. */
export const MCP_MAX_PAGE_TEXT = 100_000;
/** Characters of a stored page source read_page reads for its text at most (the source's own default bound). */
export const MCP_MAX_SOURCE_READ = 5_000_000;

/** Who is calling, as the v1 chain identified the request, and the origin its addresses use. */
export interface McpCaller {
  state: V1State;
  base: string;
}

/** Reports a job's progress (0–100) to the client, when it asked for progress. */
type Progress = (progress: number) => Promise<void>;

const toolError = (message: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: message }] });

/**
 * A refusal of the v1 chain past authentication (the daily or monthly limit, a full queue, a
 * field the job schema refuses) is the tool's answer, not a transport error: the agent reads it.
 */
export function toolRefusal(err: unknown): CallToolResult {
  if (err instanceof ValidationError) return toolError(`Bad request: ${err.message}`);
  const answer = knownErrorResponse(err);
  if (answer && (answer.status < 500 || answer.status === 503 || answer.status === 507)) return toolError(`${answer.title}: ${answer.message}`);
  throw err;
}

/**
 * Creates one ordinary job (counted, in history, under the quota and the fair queue) and waits
 * for its end, at most `MCP_WAIT_MS`, reporting its progress as it moves.
 */
async function runJob(deps: V1Deps, caller: McpCaller, body: Record<string, unknown>, progress: Progress): Promise<JobRecord> {
  const params = parseScreenshotParams(body);
  const [{ job }] = await requestJobs(deps, caller.state, params, caller.base);
  const deadline = Date.now() + MCP_WAIT_MS;
  let current = job;
  let reported = -1;
  while (current.status !== 'completed' && current.status !== 'failed' && Date.now() < deadline) {
    if (current.progress !== reported) {
      reported = current.progress;
      await progress(current.progress);
    }
    // Woken at the job's end; otherwise once a second, to report progress.
    current = (await deps.jobs.waitForEnd(job._id, Math.min(1000, Math.max(1, deadline - Date.now())))) ?? current;
  }
  if (current.status === 'completed') await progress(100);
  return current;
}

/** The job as text: its id and addresses, so an agent can come back to it. */
function jobText(job: JobRecord, base: string): string {
  const lines = [`job_id: ${job._id}`, `status: ${job.status}`, `status_url: ${statusUrl(base, job._id)}`];
  if (job.status === 'completed' && job.image_file) lines.push(`screenshot_url: ${screenshotUrl(base, job.image_file)}`);
  if (job.status === 'completed' && job.image_file && job.has_evidence) lines.push(`evidence_url: ${evidenceUrl(base, job.image_file)}`);
  if (job.page_title) lines.push(`page_title: ${job.page_title}`);
  if (job.final_url) lines.push(`final_url: ${job.final_url}`);
  for (const w of job.warnings ?? []) lines.push(`warning ${w.code}: ${w.message}`);
  return lines.join('\n');
}

/** A job that did not complete, as the tool's answer: failed (an error) or still running. */
function unfinished(job: JobRecord, base: string): CallToolResult {
  if (job.status === 'failed') return toolError(`The capture failed: ${job.error ?? 'no reason given'}\n${jobText(job, base)}`);
  return {
    content: [
      {
        type: 'text',
        text: `The job did not end within ${MCP_WAIT_MS / 1000} s and is still ${job.status}; read it later at its status_url.\n${jobText(job, base)}`,
      },
    ],
  };
}

/**
 * The page's content for read_page: the Markdown the capture extracted (a reader view of the main
 * content), then the metadata the page declares as JSON. Where extraction failed (the job says so
 * in its warnings), the text of the stored page source stands in for the Markdown.
 */
async function pageContent(deps: V1Deps, job: JobRecord): Promise<string> {
  let body = job.has_markdown ? await deps.files.readOutput(job._id, 'markdown') : null;
  let cut = false;
  if (body === null) {
    const source = job.has_page_source ? await deps.files.readSource(job._id) : null;
    const read = source ? await htmlToText(source, { maxChars: MCP_MAX_PAGE_TEXT, maxInputChars: MCP_MAX_SOURCE_READ }) : { text: '', truncated: false };
    const title = job.page_title ?? '';
    body = `${title ? `# ${title}\n\n` : ''}${read.text || '(the page has no text)'}`;
    cut = read.truncated;
  }
  const clipped = cut || body.length > MCP_MAX_PAGE_TEXT ? `${body.slice(0, MCP_MAX_PAGE_TEXT)}\n[text truncated at ${MCP_MAX_PAGE_TEXT} characters]` : body;
  return job.metadata ? `${clipped}\n\n---\nmetadata: ${JSON.stringify(job.metadata)}` : clipped;
}

const Device = z.enum(['desktop', 'tablet', 'mobile']);
const Format = z.enum(['png', 'jpeg', 'webp']);
const Url = z.string().min(1).describe('http:// or https:// address of the page (or give html instead)');
const Html = z.string().min(1).describe('an HTML document to render instead of a url (at most 5 MB); what it loads meets the same egress policy');
const Login = z.string().min(1).describe('a saved login of the account (login_…, see GET /v1/logins): the page is captured signed in');
const BaseUrl = z.string().min(1).describe('with html only: the http:// or https:// address it is rendered at, which its relative addresses resolve against (it is not fetched)');

/** The page a tool call names: url, or html with its base_url; exactly one of the two, as POST /v1/screenshot checks; and the saved login it is read with. */
function pageOf(args: { url?: string; html?: string; base_url?: string; login?: string }): Record<string, string> {
  return Object.fromEntries(Object.entries({ url: args.url, html: args.html, base_url: args.base_url, login: args.login }).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
}

/** Registers the appliance's tools on a server made for one request of `caller`. */
export function registerMcpTools(server: McpServer, deps: V1Deps, caller: McpCaller): void {
  server.registerTool(
    'take_screenshot',
    {
      title: 'Take a screenshot',
      description:
        'Captures a web page in a real Chromium and returns the picture, with the job that made it (job_id, status_url, screenshot_url). Each call counts as one screenshot call of the API key.',
      inputSchema: {
        url: Url.optional(),
        html: Html.optional(),
        base_url: BaseUrl.optional(),
        login: Login.optional(),
        device: Device.optional().describe('viewport preset: desktop 1920x1080, tablet 1024x768 @2, mobile 390x844 @3 (default desktop)'),
        full_page: z.boolean().optional().describe('capture the whole page, not only the viewport (default false)'),
        format: Format.optional().describe('image format (default png)'),
        evidence: z
          .boolean()
          .optional()
          .describe("also keep a signed WACZ web archive of the page's HTTP exchanges with the picture; the answer gives its evidence_url (default false)"),
      },
    },
    async ({ device, full_page, format, evidence, ...page }, extra) => {
      let job: JobRecord;
      try {
        const params = { ...pageOf(page), devices: [device ?? 'desktop'], full_page: full_page ?? false, format: format ?? 'png', ...(evidence ? { evidence } : {}) };
        job = await runJob(deps, caller, params, progressOf(extra));
      } catch (err) {
        return toolRefusal(err);
      }
      if (job.status !== 'completed' || !job.image_file) return unfinished(job, caller.base);
      const text = { type: 'text' as const, text: jobText(job, caller.base) };
      const stored = await deps.files.image(job.image_file);
      if (!stored) return toolError(`The captured image is no longer stored\n${text.text}`);
      if (stored.size > MCP_MAX_INLINE_IMAGE_BYTES) {
        return { content: [{ type: 'text', text: `The image is ${stored.size} bytes, more than is sent inline; fetch it from screenshot_url.\n${text.text}` }] };
      }
      const image = await deps.files.readImage(job.image_file);
      if (!image) return toolError(`The captured image is no longer stored\n${text.text}`);
      const data = image.toString('base64');
      return { content: [{ type: 'image', data, mimeType: IMAGE_CONTENT_TYPES[job.format] }, text] };
    },
  );

  server.registerTool(
    'read_page',
    {
      title: 'Read a page',
      description:
        'Loads a web page in a real Chromium and returns its main content as Markdown (a reader view: headings, code blocks, tables, absolute links) and the metadata the page declares (title, description, language, canonical URL, Open Graph, icons, feeds, dates), with the job that read it. Each call counts as one screenshot call of the API key.',
      inputSchema: { url: Url.optional(), html: Html.optional(), base_url: BaseUrl.optional(), login: Login.optional() },
    },
    async (page, extra) => {
      let job: JobRecord;
      try {
        job = await runJob(deps, caller, { ...pageOf(page), devices: ['desktop'], extract: ['markdown', 'metadata'] }, progressOf(extra));
      } catch (err) {
        return toolRefusal(err);
      }
      if (job.status !== 'completed') return unfinished(job, caller.base);
      return { content: [{ type: 'text', text: await pageContent(deps, job) }, { type: 'text', text: jobText(job, caller.base) }] };
    },
  );
}

interface ToolExtra {
  _meta?: { progressToken?: string | number };
  sendNotification: (n: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; total: number } }) => Promise<void>;
}

/** Progress notifications to the client, when its call carries a progress token. */
function progressOf(extra: ToolExtra): Progress {
  const token = extra._meta?.progressToken;
  if (token === undefined) return async () => undefined;
  return (progress) => extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100 } }).catch(() => undefined);
}
