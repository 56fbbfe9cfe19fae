import { Fragment } from 'preact';
import { useState } from 'preact/hooks';

import type { AdminJob, WebhookDelivery } from '../admin-types.js';
import { api, apiText, query } from '../api-client.js';
import { WarningList } from '../components/capture-warnings.js';
import { ExtractedOutputs } from '../components/extracted-outputs.js';
import { LoadError } from '../components/load-error.js';
import { Modal } from '../components/modal.js';
import { StatusBadge } from '../components/status-badge.js';
import { useToast } from '../components/toasts.js';
import { formatAbsolute, formatDuration, formatRelative } from '../format-time.js';
import { useResource } from '../use-resource.js';

const LIVE_POLL_MS = 1500;
const WEBHOOK_POLL_MS = 3000;

/** Everything about one job: the image, the captured HTML (as text), the error, webhook deliveries. */
export function JobDetailsDialog({ jobId, initial, onClose }: { jobId: string; initial?: AdminJob; onClose: () => void }) {
  const job = useResource(
    (signal) => api<AdminJob>(`/admin/api/jobs/${encodeURIComponent(jobId)}`, { signal }),
    [jobId],
    (j) => (j && (j.status === 'pending' || j.status === 'processing') ? LIVE_POLL_MS : null),
  );
  const j = job.data ?? initial;
  return (
    <Modal title="Job details" onClose={onClose} wide>
      {job.error && !j && <LoadError error={job.error} onRetry={job.reload} />}
      {!j && !job.error && <p class="loading">Loading…</p>}
      {j && <JobDetails job={j} />}
    </Modal>
  );
}

function JobDetails({ job }: { job: AdminJob }) {
  // Only a completed job has an image, a completion time and a page source.
  const done = job.status === 'completed' ? job : undefined;
  return (
    <div class="job-details">
      <div class="job-details-top">
        <div class="job-preview">
          {done && !job.expired && job.format === 'pdf' ? (
            <div class="thumb-empty preview-empty">A PDF of the page: open it below.</div>
          ) : done && !job.expired ? (
            <a href={done.screenshot_url} target="_blank" rel="noopener noreferrer">
              <img src={done.screenshot_url} alt={`Screenshot of ${job.url}`} />
            </a>
          ) : (
            <div class="thumb-empty preview-empty">{job.expired ? 'The image has expired (retention).' : job.status === 'failed' ? 'No image: the capture failed.' : 'No image yet.'}</div>
          )}
        </div>
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <StatusBadge status={job.status} progress={job.progress} />
          </dd>
          <dt>Page</dt>
          <dd>
            <span class="break">{job.url}</span>
          </dd>
          <dt>Job ID</dt>
          <dd>
            <code>{job.job_id}</code>
          </dd>
          <dt>Account</dt>
          <dd>{job.email ?? 'deleted account'}</dd>
          <dt>Device</dt>
          <dd>
            {job.device === job.preset ? job.device : `${job.device} (${job.preset})`}
            {job.full_page ? ', full page' : ''}
            {job.googlebot ? ', Googlebot' : ''}, {job.format}
          </dd>
          <dt>Created</dt>
          <dd>{formatAbsolute(job.created_at)}</dd>
          {done && (
            <>
              <dt>Completed</dt>
              <dd>{formatAbsolute(done.completed_at)}</dd>
              {done.http_status !== undefined && (
                <>
                  <dt>HTTP status</dt>
                  <dd>{done.http_status ?? 'not over HTTP'}</dd>
                </>
              )}
              {done.final_url !== undefined && done.final_url !== job.url && (
                <>
                  <dt>Ended at</dt>
                  <dd>
                    <span class="break">{done.final_url}</span>
                  </dd>
                </>
              )}
              {done.page_title !== undefined && (
                <>
                  <dt>Title</dt>
                  <dd>{done.page_title || 'none'}</dd>
                </>
              )}
              {done.uploaded_to && (
                <>
                  <dt>Uploaded to</dt>
                  <dd>
                    <code class="break">
                      {done.uploaded_to.bucket}/{done.uploaded_to.key}
                    </code>
                  </dd>
                </>
              )}
              {done.truncated && (
                <>
                  <dt>Cut</dt>
                  <dd>the page was taller than a capture may be; the image stops at the limit</dd>
                </>
              )}
            </>
          )}
          <dt>Took</dt>
          <dd>{formatDuration(job.duration_ms)}</dd>
          <dt>Blocked requests</dt>
          <dd>{job.blocked_requests === 0 ? 'none' : `${job.blocked_requests} (denied by the egress guard)`}</dd>
        </dl>
      </div>
      {job.status === 'failed' && job.error && (
        <div class="error-box" role="note">
          <strong>Why it failed:</strong> {job.error}
        </div>
      )}
      <div class="button-row">
        {done && !job.expired && (
          <a class="button" href={done.screenshot_url} target="_blank" rel="noopener noreferrer">
            {job.format === 'pdf' ? 'Open PDF' : 'Open image'}
          </a>
        )}
      </div>
      {done && <WarningList warnings={done.warnings} />}
      {done && <ExtractedOutputs job={done} />}
      <JobOptions options={job.options} />
      {done?.has_page_source && !job.expired && <PageSource jobId={job.job_id} />}
      {job.callback_url && <Webhooks job={job} />}
    </div>
  );
}

/** The captured HTML, fetched as text and shown as text: it is never rendered on the admin origin. */
function PageSource({ jobId }: { jobId: string }) {
  const [state, setState] = useState<{ text?: string; error?: string; busy?: boolean }>({});
  const load = async () => {
    setState({ busy: true });
    try {
      setState({ text: await apiText(`/admin/api/jobs/${encodeURIComponent(jobId)}/source`) });
    } catch (err) {
      setState({ error: err instanceof Error ? err.message : String(err) });
    }
  };
  return (
    <section class="sub-section" aria-label="Page HTML">
      <h3>Page HTML</h3>
      {state.text === undefined ? (
        <>
          <button type="button" class="button" disabled={state.busy} onClick={load}>
            {state.busy ? 'Loading…' : 'View HTML'}
          </button>
          {state.error && (
            <p class="form-error" role="alert">
              {state.error}
            </p>
          )}
        </>
      ) : (
        <pre class="source" tabIndex={0} aria-label="Captured HTML source">
          {state.text}
        </pre>
      )}
    </section>
  );
}

function Webhooks({ job }: { job: AdminJob }) {
  const notify = useToast();
  const deliveries = useResource(
    (signal) => api<{ deliveries: WebhookDelivery[] }>(`/admin/api/webhooks${query({ job_id: job.job_id })}`, { signal }).then((r) => r.deliveries),
    [job.job_id, job.status],
    // The notification goes out just after the job ends, and retries are scheduled: keep looking.
    (l) => (l && (l.length === 0 || l.some((d) => d.status === 'pending')) ? WEBHOOK_POLL_MS : null),
  );
  const [busy, setBusy] = useState<string | null>(null);
  const redeliver = async (d: WebhookDelivery) => {
    setBusy(d.id);
    try {
      const updated = await api<WebhookDelivery>(`/admin/api/webhooks/${encodeURIComponent(d.id)}/redeliver`, { method: 'POST' });
      deliveries.setData((l) => l?.map((x) => (x.id === updated.id ? updated : x)));
      notify('Webhook sent again.');
    } catch (err) {
      notify(err instanceof Error ? err.message : String(err), 'error');
    } finally {
      setBusy(null);
    }
  };
  const list = deliveries.data;
  return (
    <section class="sub-section" aria-label="Webhook deliveries">
      <h3>Webhook</h3>
      <p class="muted small">
        Sent to <span class="break">{job.callback_url}</span> when the job ends.
      </p>
      {deliveries.error && !list && <LoadError error={deliveries.error} onRetry={deliveries.reload} />}
      {list && list.length === 0 && (
        <p class="muted">
          {job.status === 'pending' || job.status === 'processing' ? 'Nothing sent yet: the webhook goes out when the job completes or fails.' : 'Sending…'}
        </p>
      )}
      {list?.map((d) => (
        <div key={d.id} class="delivery">
          <div class="delivery-head">
            <span class={`badge badge-${d.status === 'succeeded' ? 'completed' : d.status === 'failed' ? 'failed' : 'pending'}`}>{d.status}</span>
            <code>{d.type}</code>
            {d.next_attempt_at && <span class="muted small">next try {formatRelative(d.next_attempt_at)}</span>}
            <button type="button" class="button small" disabled={busy === d.id} onClick={() => redeliver(d)}>
              {busy === d.id ? 'Sending…' : 'Redeliver'}
            </button>
          </div>
          {d.attempts.length > 0 && (
            <table class="table compact">
              <caption class="visually-hidden">Delivery attempts</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Answer</th>
                  <th scope="col" class="num">
                    Took
                  </th>
                </tr>
              </thead>
              <tbody>
                {d.attempts.map((a, i) => (
                  <tr key={i}>
                    <td>{formatAbsolute(a.at)}</td>
                    <td>
                      {a.status_code !== null ? `HTTP ${a.status_code}` : (a.error ?? '—')}
                      {a.manual && <span class="muted"> (redelivered)</span>}
                    </td>
                    <td class="num">{formatDuration(a.duration_ms)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      ))}
    </section>
  );
}

/** The capture options the job used, as the request named them (secrets as names only). */
function JobOptions({ options }: { options: AdminJob['options'] }) {
  const entries = Object.entries(options);
  if (!entries.length) return null;
  const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  return (
    <section class="sub-section" aria-label="Options">
      <h3>Options</h3>
      <dl class="facts options">
        {entries.map(([name, value]) => (
          <Fragment key={name}>
            <dt>
              <code>{name}</code>
            </dt>
            <dd>
              <span class="break">{shown(value)}</span>
            </dd>
          </Fragment>
        ))}
      </dl>
    </section>
  );
}
