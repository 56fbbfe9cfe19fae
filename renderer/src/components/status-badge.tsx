import type { JobStatus } from '../admin-types.js';

const LABELS: Record<JobStatus, string> = {
  pending: 'Pending',
  processing: 'Processing',
  completed: 'Completed',
  failed: 'Failed',
};

/** A job's state as a coloured word, with a progress bar while it runs. */
export function StatusBadge({ status, progress }: { status: JobStatus; progress: number }) {
  return (
    <span class="status">
      <span class={`badge badge-${status}`}>{LABELS[status]}</span>
      {status === 'processing' && (
        <span class="progress" role="progressbar" aria-label="Capture progress" aria-valuemin={0} aria-valuemax={100} aria-valuenow={progress}>
          <span class="progress-fill" style={{ width: `${progress}%` }} />
        </span>
      )}
    </span>
  );
}
