import { useState } from 'preact/hooks';

import type { Account, Monitor, MonitorCheck } from '../admin-types.js';
import { api } from '../api-client.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { EmptyState } from '../components/empty-state.js';
import { LoadError } from '../components/load-error.js';
import { useToast } from '../components/toasts.js';
import { formatAbsolute, formatRelative } from '../format-time.js';
import { replaceParams, routeHref } from '../hash-route.js';
import { useResource } from '../use-resource.js';
import { pictureScale } from './boxed-picture.js';
import { CheckFindings, CheckOutcome } from './check-findings.js';
import { MonitorCompare } from './monitor-compare.js';
import { MonitorFormDialog } from './monitor-form-dialog.js';
import { PageHeader } from './page-header.js';
import { ProposedMasks } from './proposed-masks.js';

type Open = { kind: 'create' } | { kind: 'edit'; monitor: Monitor } | { kind: 'delete'; monitor: Monitor } | null;

const scheduleText = (m: Monitor) => ('every_minutes' in m.schedule ? `Every ${m.schedule.every_minutes} min` : `${m.schedule.cron}${m.schedule.timezone ? ` (${m.schedule.timezone})` : ' (UTC)'}`);

export function MonitorsPage({ params }: { params: URLSearchParams }) {
  const notify = useToast();
  const accounts = useResource((signal) => api<{ accounts: Account[] }>('/admin/api/accounts', { signal }).then((r) => r.accounts), []);
  const monitors = useResource((signal) => api<{ monitors: Monitor[] }>('/admin/api/monitors', { signal }).then((r) => r.monitors), [], () => 5000);
  const [open, setOpen] = useState<Open>(null);
  const close = () => setOpen(null);
  const list = monitors.data;
  const selected = list?.find((m) => m.id === params.get('monitor'));
  const emails = new Map((accounts.data ?? []).map((a) => [a.id, a.email]));

  const act = async (monitor: Monitor, what: 'run' | 'pause' | 'resume') => {
    try {
      if (what === 'run') await api(`/admin/api/monitors/${monitor.id}/run`, { method: 'POST' });
      else await api(`/admin/api/monitors/${monitor.id}`, { method: 'PATCH', body: { paused: what === 'pause' } });
      notify(what === 'run' ? 'Check started.' : what === 'pause' ? 'Monitor paused.' : 'Monitor resumed.');
      await monitors.reload();
    } catch (err) {
      notify((err as Error).message, 'error');
    }
  };

  return (
    <>
      <PageHeader title="Monitors" intro="Pages captured on a schedule; each check is compared with the one before it, and a change is shown in red." />
      {monitors.error && !list && <LoadError error={monitors.error} onRetry={monitors.reload} />}
      {!list && !monitors.error && <p class="loading">Loading…</p>}
      <div class="button-row">
        <button type="button" class="button primary" onClick={() => setOpen({ kind: 'create' })} disabled={!accounts.data?.length}>
          New monitor
        </button>
      </div>
      {list && list.length === 0 && (
        <EmptyState title="No monitors yet">
          <p>A monitor captures a page on a schedule and says when it changed. Create one here, or with POST /v1/monitors.</p>
        </EmptyState>
      )}
      {list && list.length > 0 && (
        <div class="table-wrap">
          <table class="table monitors-table">
            <caption class="visually-hidden">Monitors</caption>
            <thead>
              <tr>
                <th scope="col">Monitor</th>
                <th scope="col">Account</th>
                <th scope="col">Schedule</th>
                <th scope="col">Last check</th>
                <th scope="col">Next run</th>
                <th scope="col" class="actions">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((m) => (
                <tr key={m.id} aria-current={selected?.id === m.id ? 'true' : undefined}>
                  <td class="cell-main">
                    <a href={routeHref('monitors', { monitor: m.id })}>{m.name ?? m.url}</a>
                    {m.name && <div class="muted small">{m.url}</div>}
                    {m.paused && m.paused_reason && <div class="paused-reason small">Paused by itself: {m.paused_reason}</div>}
                    {m.proposed_masks.length > 0 && (
                      <a class="proposed-mark" href={routeHref('monitors', { monitor: m.id })}>
                        {m.proposed_masks.length === 1 ? '1 mask proposed' : `${m.proposed_masks.length} masks proposed`}
                      </a>
                    )}
                  </td>
                  <td>{emails.get(m.account_id) ?? m.account_id}</td>
                  <td>{scheduleText(m)}</td>
                  <td>
                    <CheckOutcome check={m.last_check} /> {m.last_check && <span class="muted small">{formatRelative(m.last_check.at)}</span>}
                  </td>
                  <td>{m.paused ? <span class="muted">Paused</span> : m.next_run_at ? formatAbsolute(m.next_run_at) : '—'}</td>
                  <td class="actions actions-wrap">
                    <button type="button" class="button small" onClick={() => act(m, 'run')}>
                      Run now
                    </button>
                    <button type="button" class="button small" onClick={() => act(m, m.paused ? 'resume' : 'pause')}>
                      {m.paused ? 'Resume' : 'Pause'}
                    </button>
                    <button type="button" class="button small" onClick={() => setOpen({ kind: 'edit', monitor: m })}>
                      Edit
                    </button>
                    <button type="button" class="button small danger-text" onClick={() => setOpen({ kind: 'delete', monitor: m })}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {selected && <MonitorTimeline key={selected.id} monitor={selected} params={params} onChanged={monitors.reload} />}
      {open?.kind === 'create' && accounts.data && (
        <MonitorFormDialog accounts={accounts.data} onClose={close} onSaved={(m) => (close(), notify('Monitor created.'), void monitors.reload(), replaceParams('monitors', { monitor: m.id }))} />
      )}
      {open?.kind === 'edit' && <MonitorFormDialog monitor={open.monitor} accounts={accounts.data ?? []} onClose={close} onSaved={() => (close(), notify('Monitor saved.'), void monitors.reload())} />}
      {open?.kind === 'delete' && (
        <ConfirmDialog
          title="Delete monitor"
          confirmLabel="Delete"
          onClose={close}
          onConfirm={async () => {
            await api(`/admin/api/monitors/${open.monitor.id}`, { method: 'DELETE' });
            notify('Monitor deleted.');
            replaceParams('monitors', {});
            await monitors.reload();
          }}
        >
          <p>Its checks and diff pictures are removed; their screenshots stay until the retention period ends.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

/** A monitor's masks proposed to accept, its checks newest first (what each found, its text change first); choosing two shows them compared. */
function MonitorTimeline({ monitor, params, onChanged }: { monitor: Monitor; params: URLSearchParams; onChanged: () => Promise<void> }) {
  const checks = useResource(
    (signal) => api<{ checks: MonitorCheck[] }>(`/admin/api/monitors/${monitor.id}/checks?limit=50`, { signal }).then((r) => r.checks),
    [monitor.id],
    (data) => (data?.some((c) => c.status === 'pending') ? 1000 : 5000),
  );
  const list = checks.data;
  const chosen = (params.get('compare') ?? '').split(',').filter(Boolean);
  const pictured = (list ?? []).filter((c) => c.status === 'completed' && c.screenshot_url);
  // Without a choice: the newest check and the one before it.
  const pair = chosen.length === 2 ? chosen.map((id) => pictured.find((c) => c.job_id === id)) : pictured.slice(0, 2).reverse();
  const [older, newer] = pair;
  const toggle = (jobId: string) => {
    const next = chosen.includes(jobId) ? chosen.filter((id) => id !== jobId) : [...chosen, jobId].slice(-2);
    const ordered = (list ?? []).filter((c) => c.job_id && next.includes(c.job_id)).reverse().map((c) => c.job_id!);
    replaceParams('monitors', { monitor: monitor.id, compare: ordered.join(',') || undefined });
  };

  // Checks of earlier versions do not say their picture's scale: the monitor's capture tells it, but for a resized picture.
  const scale = pictureScale(monitor);

  return (
    <>
      {monitor.proposed_masks.length > 0 && <ProposedMasks monitor={monitor} picture={pictured[0]?.screenshot_url ?? null} scale={pictured[0]?.picture_scale ?? scale} onDecided={onChanged} />}
      <div class="card">
        <div class="card-head">
          <h2 class="card-title">Checks of {monitor.name ?? monitor.url}</h2>
        </div>
        {checks.error && !list && <LoadError error={checks.error} onRetry={checks.reload} />}
        {list && list.length === 0 && <p class="muted">No checks yet: run one now, or wait for the schedule.</p>}
        {list && list.length > 0 && (
          <ol class="timeline">
            {list.map((c) => (
              <li key={c.job_id ?? c.at} class="timeline-item">
                {c.screenshot_url ? <img class="timeline-thumb" src={`${c.screenshot_url}/thumbnail`} alt="" /> : <span class="timeline-thumb empty" />}
                <div>
                  <div>
                    <CheckOutcome check={c} /> <span class="muted small">{formatAbsolute(c.at)}</span>
                  </div>
                  <CheckFindings check={c} compact />
                </div>
                {c.job_id && c.status === 'completed' && (
                  <label class="timeline-pick">
                    <input type="checkbox" checked={chosen.includes(c.job_id)} onChange={() => toggle(c.job_id!)} /> Compare
                  </label>
                )}
              </li>
            ))}
          </ol>
        )}
      </div>
      {older && newer && <MonitorCompare older={older} newer={newer} scale={scale} />}
    </>
  );
}
