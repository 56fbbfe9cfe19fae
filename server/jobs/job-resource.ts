import type { JobRecord } from '../store/records/job-record.js';
import { formatSpecTime } from '../time.js';

/** Absolute address of a job's status endpoint. */
export const statusUrl = (baseUrl: string, jobId: string) => `${baseUrl}/v1/screenshot/${jobId}`;

/** Absolute, unguessable address of a job's image. */
export const screenshotUrl = (baseUrl: string, imageFile: string) => `${baseUrl}/v1/files/${imageFile}`;

/** Absolute address of a job's evidence bundle, under its image's capability name. */
export const evidenceUrl = (baseUrl: string, imageFile: string) => `${screenshotUrl(baseUrl, imageFile)}/evidence.wacz`;

/**
 * The job as the status endpoint returns it, with the specification's presence rules:
 * screenshot_url, completed_at, has_page_source and warnings only when completed, error only when
 * failed, page_source only when asked for (and stored).
 */
export function toStatusResource(job: JobRecord, baseUrl: string, pageSource?: string | null, outputs: ReadOutputs = {}): Record<string, unknown> {
  const resource: Record<string, unknown> = {
    job_id: job._id,
    status: job.status,
    progress: job.progress,
    url: job.url,
    preset: job.preset,
    full_page: job.full_page,
    googlebot: job.googlebot,
    created_at: formatSpecTime(job.created_at),
  };
  if (job.status === 'completed') {
    resource.screenshot_url = screenshotUrl(baseUrl, job.image_file ?? '');
    if (job.has_evidence) resource.evidence_url = evidenceUrl(baseUrl, job.image_file ?? '');
    resource.completed_at = formatSpecTime(job.completed_at ?? job.created_at);
    resource.has_page_source = job.has_page_source;
    if (job.truncated) resource.truncated = true;
    if (job.expired) resource.expired = true;
    // Jobs of earlier versions have none of the three.
    if (job.http_status !== undefined) resource.http_status = job.http_status;
    if (typeof job.final_url === 'string') resource.final_url = job.final_url;
    if (typeof job.page_title === 'string') resource.page_title = job.page_title;
    if (job.has_markdown !== undefined) resource.has_markdown = job.has_markdown;
    if (job.has_text !== undefined) resource.has_text = job.has_text;
    if (job.has_links !== undefined) resource.has_links = job.has_links;
    if (job.links_truncated) resource.links_truncated = true;
    if (job.metadata) resource.metadata = job.metadata;
    resource.warnings = job.warnings ?? [];
    if (job.uploaded_to) resource.uploaded_to = job.uploaded_to;
  }
  if (job.status === 'failed') resource.error = job.error ?? 'The capture failed';
  if (typeof pageSource === 'string') resource.page_source = pageSource;
  if (typeof outputs.markdown === 'string') resource.markdown = outputs.markdown;
  if (typeof outputs.text === 'string') resource.text = outputs.text;
  if (outputs.links) resource.links = outputs.links;
  return resource;
}

/** Extracted outputs read from their files, as asked for with include_markdown, include_text and include_links. */
export interface ReadOutputs {
  markdown?: string | null;
  text?: string | null;
  links?: Array<{ url: string; text: string }> | null;
}
