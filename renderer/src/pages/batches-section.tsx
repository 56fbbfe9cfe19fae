import type { Account, AdminBatch } from '../admin-types.js';
import { api } from '../api-client.js';
import { formatAbsolute, formatRelative } from '../format-time.js';
import { useResource } from '../use-resource.js';

/** How often the batches are read again while one runs, and otherwise. */
const LIVE_POLL_MS = 1500;
const IDLE_POLL_MS = 5000;
/** The newest batches shown. */
const SHOWN = 10;

const LABELS: Record<AdminBatch['status'], string> = { running: 'Running', completed: 'Completed', cancelled: 'Cancelled' };

/**
 * The newest batches above the jobs: each with its progress, its failures and its archive; the
 * batches with failures first, each group newest first. Nothing is shown before the first batch.
 */
export function BatchesSection({ accounts }: { accounts: readonly Account[] }) {
  const batches = useResource(
    (signal) => api<{ batches: AdminBatch[] }>(`/admin/api/batches?limit=${SHOWN}`, { signal }).then((r) => r.batches),
    [],
    (list) => (list?.some((b) => b.status === 'running') ? LIVE_POLL_MS : IDLE_POLL_MS),
  );
  if (!batches.data || batches.data.length === 0) return null;
  const emails = new Map(accounts.map((a) => [a.id, a.email]));
  const rows = [...batches.data.filter((b) => b.failed > 0), ...batches.data.filter((b) => b.failed === 0)];
  return (
    <section class="batches" aria-labelledby="batches-title">
      <h2 id="batches-title" class="card-title">
        Batches
      </h2>
      <div class="table-wrap">
        <table class="table batches-table">
          <caption class="visually-hidden">The newest batches, those with failures first</caption>
          <thead>
            <tr>
              <th scope="col">Batch</th>
              <th scope="col">Account</th>
              <th scope="col">Status</th>
              <th scope="col">Progress</th>
              <th scope="col" class="num">
                Failed
              </th>
              <th scope="col">Created</th>
              <th scope="col">Archive</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((b) => (
              <tr key={b.batch_id} data-batch-id={b.batch_id} data-status={b.status}>
                <td class="cell-main">
                  <code>{b.batch_id}</code>
                </td>
                <td>{emails.get(b.account_id) ?? <span class="muted">deleted account</span>}</td>
                <td>
                  <span class={`badge badge-batch-${b.status}`}>{LABELS[b.status]}</span>
                </td>
                <td>
                  <span class="progress" role="progressbar" aria-label={`Batch progress: ${b.completed + b.failed} of ${b.total} ended`} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(b.progress * 100)}>
                    <span class="progress-fill" style={{ width: `${Math.round(b.progress * 100)}%` }} />
                  </span>
                  <span class="muted small">
                    {b.completed + b.failed} / {b.total}
                  </span>
                </td>
                <td class={`num${b.failed > 0 ? ' batch-failed' : ''}`}>{b.failed}</td>
                <td>
                  <time dateTime={b.created_at} title={formatAbsolute(b.created_at)}>
                    {formatRelative(b.created_at)}
                  </time>
                </td>
                <td>
                  <a href={b.archive_url} download={`${b.batch_id}.zip`}>
                    ZIP
                  </a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
