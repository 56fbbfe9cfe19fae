import { useState } from 'preact/hooks';

import type { Account, AdminJob, JobPage, JobStatus, Status } from '../admin-types.js';
import { api, query } from '../api-client.js';
import { WarningMark } from '../components/capture-warnings.js';
import { EmptyState } from '../components/empty-state.js';
import { SelectField } from '../components/fields.js';
import { LoadError } from '../components/load-error.js';
import { StatusBadge } from '../components/status-badge.js';
import { useToast } from '../components/toasts.js';
import { formatAbsolute, formatDuration, formatRelative } from '../format-time.js';
import { replaceParams, routeHref } from '../hash-route.js';
import { useResource } from '../use-resource.js';
import { BatchesSection } from './batches-section.js';
import { JobDetailsDialog } from './job-details-dialog.js';
import { PageHeader } from './page-header.js';

/** How often the list is refreshed while a visible job is still moving, and otherwise. */
const LIVE_POLL_MS = 1500;
const IDLE_POLL_MS = 3000;
const PAGE_SIZE = 50;
const MAX_PAGE = 200;

const STATUSES = [
  { value: '', label: 'Any status' },
  { value: 'pending', label: 'Pending' },
  { value: 'processing', label: 'Processing' },
  { value: 'completed', label: 'Completed' },
  { value: 'failed', label: 'Failed' },
] as const;

const isActive = (j: AdminJob) => j.status === 'pending' || j.status === 'processing';

export function JobsPage({ params }: { params: URLSearchParams }) {
  const notify = useToast();
  const status = (params.get('status') ?? '') as JobStatus | '';
  const accountId = params.get('account') ?? '';
  const openJob = params.get('job');
  const accounts = useResource((signal) => api<{ accounts: Account[] }>('/admin/api/accounts', { signal }).then((r) => r.accounts), []);
  // How many rows the user has paged in; refreshes fetch that many from the top.
  const [wanted, setWanted] = useState(PAGE_SIZE);
  const [older, setOlder] = useState<{ jobs: AdminJob[]; next: string | null } | null>(null);
  const [loadingOlder, setLoadingOlder] = useState(false);

  const jobs = useResource(
    (signal) => api<JobPage>(`/admin/api/jobs${query({ status, account_id: accountId, limit: Math.min(wanted, MAX_PAGE) })}`, { signal }),
    [status, accountId],
    (page) => (page?.jobs.some(isActive) ? LIVE_POLL_MS : IDLE_POLL_MS),
  );

  const setFilter = (next: { status?: string; account?: string }) => {
    setWanted(PAGE_SIZE);
    setOlder(null);
    replaceParams('jobs', { status, account: accountId, ...next });
  };

  const loadOlder = async () => {
    const last = older?.next ?? jobs.data?.next_before;
    if (!last) return;
    setLoadingOlder(true);
    try {
      const page = await api<JobPage>(`/admin/api/jobs${query({ status, account_id: accountId, limit: PAGE_SIZE, before: last })}`);
      setOlder((o) => ({ jobs: [...(o?.jobs ?? []), ...page.jobs], next: page.next_before }));
      setWanted((w) => Math.min(w + PAGE_SIZE, MAX_PAGE));
    } catch (err) {
      notify(err instanceof Error ? err.message : String(err), 'error');
    } finally {
      setLoadingOlder(false);
    }
  };

  const top = jobs.data?.jobs ?? [];
  const seen = new Set(top.map((j) => j.job_id));
  const rows = [...top, ...(older?.jobs.filter((j) => !seen.has(j.job_id)) ?? [])];
  const hasMore = older ? older.next !== null : jobs.data?.next_before != null;
  const filtered = status !== '' || accountId !== '';
  const selected = openJob ? rows.find((j) => j.job_id === openJob) : undefined;
  const showJob = (id: string | undefined) => replaceParams('jobs', { status, account: accountId, job: id });

  return (
    <>
      <PageHeader title="Jobs" intro="Every screenshot job, newest first. Running jobs update by themselves." />
      <div class="toolbar" role="search" aria-label="Filter jobs">
        <SelectField label="Status" value={status} onChange={(v) => setFilter({ status: v })} options={STATUSES} />
        <SelectField
          label="Account"
          value={accountId}
          onChange={(v) => setFilter({ account: v })}
          options={[{ value: '', label: 'All accounts' }, ...(accounts.data ?? []).map((a) => ({ value: a.id, label: a.email }))]}
        />
        {filtered && (
          <button type="button" class="button toolbar-button" onClick={() => setFilter({ status: '', account: '' })}>
            Clear filters
          </button>
        )}
      </div>
      <BatchesSection accounts={accounts.data ?? []} />
      {jobs.error && !jobs.data && <LoadError error={jobs.error} onRetry={jobs.reload} />}
      {!jobs.data && !jobs.error && <p class="loading">Loading…</p>}
      {jobs.data && rows.length === 0 && (filtered ? <NoMatches onClear={() => setFilter({ status: '', account: '' })} /> : <NoJobs />)}
      {rows.length > 0 && (
        <div class="table-wrap">
          <table class="table jobs-table">
            <caption class="visually-hidden">Jobs, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Preview</th>
                <th scope="col">Page</th>
                <th scope="col">Account</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col" class="num">
                  Took
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((j) => (
                <JobRow key={j.job_id} job={j} onOpen={() => showJob(j.job_id)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {hasMore && (
        <div class="more">
          <button type="button" class="button" disabled={loadingOlder} onClick={loadOlder}>
            {loadingOlder ? 'Loading…' : 'Load older jobs'}
          </button>
        </div>
      )}
      {openJob && <JobDetailsDialog jobId={openJob} initial={selected} onClose={() => showJob(undefined)} />}
    </>
  );
}

function JobRow({ job, onOpen }: { job: AdminJob; onOpen: () => void }) {
  return (
    <tr data-job-id={job.job_id} data-status={job.status}>
      <td class="thumb-cell">
        <Thumbnail job={job} />
      </td>
      <td class="cell-main">
        <button type="button" class="link-button job-url" onClick={onOpen} title={job.url}>
          {job.url}
        </button>
        <div class="muted small">
          {job.preset}
          {job.full_page && ' · full page'}
          {job.googlebot && ' · Googlebot'} · {job.format}
        </div>
        {job.status === 'failed' && job.error && <div class="job-error">{job.error}</div>}
      </td>
      <td>{job.email ?? <span class="muted">deleted account</span>}</td>
      <td>
        <StatusBadge status={job.status} progress={job.progress} />
        {job.status === 'completed' && <WarningMark warnings={job.warnings} />}
      </td>
      <td>
        <time dateTime={job.created_at} title={formatAbsolute(job.created_at)}>
          {formatRelative(job.created_at)}
        </time>
      </td>
      <td class="num">{formatDuration(job.duration_ms)}</td>
    </tr>
  );
}

function Thumbnail({ job }: { job: AdminJob }) {
  if (job.status === 'completed' && job.screenshot_url && !job.expired) {
    // Only ever the small thumbnail: a list of full-size images is what made the page heavy,
    // and a job without a thumbnail (a PDF) has no image to show at all.
    return (
      <a href={job.screenshot_url} target="_blank" rel="noopener noreferrer" class="thumb-link" aria-label={`Open the screenshot of ${job.url}`}>
        {job.thumbnail_url ? (
          <img class="thumb" src={job.thumbnail_url} alt="" loading="lazy" decoding="async" />
        ) : (
          <span class="thumb thumb-empty thumb-document">{job.format.toUpperCase()}</span>
        )}
      </a>
    );
  }
  const text = job.expired ? 'Expired' : job.status === 'failed' ? 'Failed' : job.status === 'completed' ? 'No image' : `${job.progress}%`;
  return (
    <span class={`thumb thumb-empty thumb-${job.status}`} aria-hidden="true">
      {text}
    </span>
  );
}

function NoJobs() {
  const status = useResource((signal) => api<Status>('/admin/api/status', { signal }), []);
  const base = status.data?.api_base_url ?? `${location.origin}/v1`;
  return (
    <EmptyState title="No jobs yet">
      <p>
        Jobs appear here as soon as a client asks for a screenshot. With a key from the <a href={routeHref('keys')}>API keys</a> page:
      </p>
      <pre class="code-block">
        {`curl -X POST -H "X-API-Key: $KEY" -H "Content-Type: application/json" \\
  -d '{"url": "https://example.com"}' ${base}/screenshot`}
      </pre>
    </EmptyState>
  );
}

function NoMatches({ onClear }: { onClear: () => void }) {
  return (
    <EmptyState title="No jobs match these filters">
      <button type="button" class="button" onClick={onClear}>
        Show all jobs
      </button>
    </EmptyState>
  );
}
