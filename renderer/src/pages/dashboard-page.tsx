import { useState } from 'preact/hooks';

import type { QueueState, Status, Usage } from '../admin-types.js';
import { api, type ApiRequestError,query } from '../api-client.js';
import { CopyButton } from '../components/copy-button.js';
import { EmptyState } from '../components/empty-state.js';
import { LoadError } from '../components/load-error.js';
import { type ChartSeries,StackedBarChart } from '../components/stacked-bar-chart.js';
import { useToast } from '../components/toasts.js';
import { routeHref } from '../hash-route.js';
import { useResource } from '../use-resource.js';
import { PageHeader } from './page-header.js';

/** Accounts drawn on their own in the usage chart; the rest are summed as "Other accounts". */
const MAX_CHART_ACCOUNTS = 5;
const CHART_COLORS = ['var(--chart-1)', 'var(--chart-2)', 'var(--chart-3)', 'var(--chart-4)', 'var(--chart-5)', 'var(--chart-other)'];

const hourLabel = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
const hourTick = new Intl.DateTimeFormat(undefined, { hour: '2-digit' });
const dayLabel = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' });

export function DashboardPage() {
  const notify = useToast();
  const status = useResource((signal) => api<Status>('/admin/api/status', { signal }), [], () => 5000);
  const usage = useResource((signal) => api<Usage>(`/admin/api/usage${query({ days: 30 })}`, { signal }), [], () => 60_000);
  const [queueBusy, setQueueBusy] = useState(false);

  const toggleQueue = async () => {
    if (!status.data) return;
    const paused = status.data.queue.paused;
    setQueueBusy(true);
    try {
      const queue = await api<QueueState>(`/admin/api/queue/${paused ? 'resume' : 'pause'}`, { method: 'POST' });
      status.setData((s) => s && { ...s, queue });
      notify(queue.paused ? 'Queue paused: new jobs wait until you resume it.' : 'Queue resumed.');
    } catch (err) {
      notify(err instanceof Error ? err.message : String(err), 'error');
    } finally {
      setQueueBusy(false);
    }
  };

  const s = status.data;
  return (
    <>
      <PageHeader title="Dashboard">
        {s && (
          <button type="button" class="button" disabled={queueBusy} onClick={toggleQueue}>
            {s.queue.paused ? 'Resume queue' : 'Pause queue'}
          </button>
        )}
      </PageHeader>
      {status.error && !s && <LoadError error={status.error} onRetry={status.reload} />}
      {!s && !status.error && <p class="loading">Loading…</p>}
      {s && <StatusCards status={s} />}
      {s && (
        <div class="card">
          <h2 class="card-title">API address</h2>
          <div class="input-row">
            <code class="code-box">{s.api_base_url}</code>
            <CopyButton text={s.api_base_url} label="Copy address" />
          </div>
          <p class="field-hint">
            Clients send <code>POST {s.api_base_url}/screenshot</code> with their key in the <code>X-API-Key</code> header.
          </p>
        </div>
      )}
      {s && (
        <div class="card">
          <h2 class="card-title">Evidence signing key</h2>
          <div class="input-row">
            <code class="code-box">{s.evidence_public_key}</code>
            <CopyButton text={s.evidence_public_key} label="Copy key" />
          </div>
          <p class="field-hint">
            The Ed25519 public key (base64) that signs the evidence bundles of captures asked with <code>evidence: true</code>. Give it to those who
            check them: a bundle it verifies was made by this appliance.
          </p>
        </div>
      )}
      {s && <CapturesPerHour status={s} />}
      <UsageCard usage={usage.data} error={usage.error} onRetry={usage.reload} />
    </>
  );
}

function StatusCards({ status }: { status: Status }) {
  const { queue, engine } = status;
  const done = status.captures_per_hour.reduce((a, h) => a + h.completed, 0);
  const failed = status.captures_per_hour.reduce((a, h) => a + h.failed, 0);
  return (
    <ul class="stats" aria-label="Service status">
      <li class="stat">
        <span class="stat-label">Waiting</span>
        <span class="stat-value">{queue.pending}</span>
        <span class="stat-note">{queue.paused ? <span class="badge badge-failed">Paused</span> : `queue limit ${queue.limit}`}</span>
      </li>
      <li class="stat">
        <span class="stat-label">Running</span>
        <span class="stat-value">{queue.running}</span>
        <span class="stat-note">of {queue.concurrency} at once</span>
      </li>
      <li class="stat">
        <span class="stat-label">Captures, 24 h</span>
        <span class="stat-value">{done}</span>
        <span class="stat-note">completed</span>
      </li>
      <li class="stat">
        <span class="stat-label">Failures, 24 h</span>
        <span class={failed > 0 ? 'stat-value stat-bad' : 'stat-value'}>{failed}</span>
        <span class="stat-note">{failed > 0 ? <a href={routeHref('jobs', { status: 'failed' })}>See failed jobs</a> : 'none'}</span>
      </li>
      <li class="stat">
        <span class="stat-label">Engine</span>
        <span class="stat-value stat-small">{engine.name}</span>
        <span class="stat-note">
          {engine.version ?? 'starting'} · {engine.ready ? <span class="ok">ready</span> : <span class="bad">not ready</span>}
          {engine.browsers > 1 && (
            <>
              {' · '}
              <span class={engine.browsers_ready < engine.browsers ? 'bad' : undefined}>
                {engine.browsers_ready} of {engine.browsers} browsers up
              </span>
            </>
          )}
        </span>
      </li>
    </ul>
  );
}

function CapturesPerHour({ status }: { status: Status }) {
  const hours = status.captures_per_hour;
  const series: ChartSeries[] = [
    { name: 'Completed', color: 'var(--chart-ok)' },
    { name: 'Failed', color: 'var(--chart-bad)' },
  ];
  const total = hours.reduce((a, h) => a + h.completed + h.failed, 0);
  return (
    <div class="card">
      <h2 class="card-title">Captures per hour</h2>
      {total === 0 ? (
        <p class="muted">No captures in the last 24 hours.</p>
      ) : (
        <StackedBarChart
          series={series}
          description={`Captures per hour over the last 24 hours: ${total} in all.`}
          bars={hours.map((h, i) => {
            const d = new Date(h.hour);
            return { label: hourLabel.format(d), tick: i % 3 === 0 ? hourTick.format(d) : '', values: [h.completed, h.failed] };
          })}
        />
      )}
    </div>
  );
}

function UsageCard({ usage, error, onRetry }: { usage: Usage | undefined; error: ApiRequestError | undefined; onRetry: () => void }) {
  return (
    <div class="card">
      <h2 class="card-title">Usage per account, last 30 days</h2>
      {error && !usage && <LoadError error={error} onRetry={onRetry} />}
      {!usage && !error && <p class="loading">Loading…</p>}
      {usage && <UsageChart usage={usage} />}
    </div>
  );
}

function UsageChart({ usage }: { usage: Usage }) {
  const total = usage.days.reduce((a, d) => a + d.count, 0);
  if (total === 0) {
    return (
      <EmptyState title="No calls in the last 30 days">
        <p>
          <a href={routeHref('accounts')}>Create an account</a>, give it an <a href={routeHref('keys')}>API key</a>, then send{' '}
          <code>POST /v1/screenshot</code> with the key in <code>X-API-Key</code>. Each screenshot job counts as one call.
        </p>
      </EmptyState>
    );
  }
  const accounts = [...(usage.accounts ?? [])]
    .map((a) => ({ ...a, total: a.days.reduce((s, d) => s + d.count, 0) }))
    .filter((a) => a.total > 0)
    .sort((a, b) => b.total - a.total);
  const shown = accounts.slice(0, MAX_CHART_ACCOUNTS);
  const series: ChartSeries[] = shown.map((a, i) => ({ name: a.email, color: CHART_COLORS[i]! }));
  const hasOther = accounts.length > shown.length || accounts.length === 0;
  if (hasOther) series.push({ name: accounts.length === 0 ? 'All accounts' : 'Other accounts', color: CHART_COLORS[MAX_CHART_ACCOUNTS]! });

  const bars = usage.days.map((day, i) => {
    const perAccount = shown.map((a) => a.days.find((d) => d.date === day.date)?.count ?? 0);
    const values = hasOther ? [...perAccount, Math.max(0, day.count - perAccount.reduce((s, v) => s + v, 0))] : perAccount;
    const d = new Date(`${day.date}T00:00:00Z`);
    return { label: dayLabel.format(d), tick: i % 5 === 0 || i === usage.days.length - 1 ? dayLabel.format(d) : '', values };
  });

  return (
    <>
      <StackedBarChart series={series} bars={bars} description={`Calls per day over the last ${usage.days.length} days: ${total} in all.`} />
      <details class="chart-table">
        <summary>Show as a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Account</th>
              <th scope="col" class="num">
                Calls, {usage.days.length} days
              </th>
            </tr>
          </thead>
          <tbody>
            {accounts.map((a) => (
              <tr key={a.account_id}>
                <td>{a.email}</td>
                <td class="num">{a.total}</td>
              </tr>
            ))}
            <tr>
              <th scope="row">All accounts</th>
              <td class="num">{total}</td>
            </tr>
          </tbody>
        </table>
      </details>
    </>
  );
}
