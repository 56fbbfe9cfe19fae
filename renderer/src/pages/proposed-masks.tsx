import { useState } from 'preact/hooks';

import type { Monitor } from '../admin-types.js';
import { api } from '../api-client.js';
import { useToast } from '../components/toasts.js';
import { BoxedPicture } from './boxed-picture.js';

/**
 * The masks proposed from a monitor's first baseline (where two captures seconds apart differed:
 * clocks, carousels, counters), drawn over its latest picture and listed, to accept (they become
 * rectangle masks) or reject.
 */
export function ProposedMasks({ monitor, picture, scale, onDecided }: { monitor: Monitor; picture: string | null; scale: number; onDecided: () => Promise<void> }) {
  const notify = useToast();
  const [busy, setBusy] = useState(false);
  const masks = monitor.proposed_masks;
  const decide = async (decision: 'accept' | 'reject') => {
    setBusy(true);
    try {
      await api(`/admin/api/monitors/${monitor.id}/proposed-masks/${decision}`, { method: 'POST' });
      notify(decision === 'accept' ? 'Masks accepted: they are left out of every comparison.' : 'Proposed masks rejected.');
      await onDecided();
    } catch (err) {
      notify((err as Error).message, 'error');
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card proposed-masks" aria-label="Proposed masks">
      <div class="card-head">
        <h2 class="card-title">
          {masks.length === 1 ? '1 mask proposed' : `${masks.length} masks proposed`}
        </h2>
        <div class="button-row">
          <button type="button" class="button small primary" disabled={busy} onClick={() => decide('accept')}>
            Accept
          </button>
          <button type="button" class="button small" disabled={busy} onClick={() => decide('reject')}>
            Reject
          </button>
        </div>
      </div>
      <p class="muted">These parts of the page changed between two captures taken seconds apart. Accepted, they become rectangle masks left out of every comparison.</p>
      <ul class="region-list" aria-label="Masks proposed">
        {masks.map((m, i) => (
          <li key={i}>
            {Math.round(m.width)} × {Math.round(m.height)} at ({Math.round(m.x)}, {Math.round(m.y)})
          </li>
        ))}
      </ul>
      {picture && (
        <BoxedPicture src={picture} alt="The latest picture, the proposed masks drawn over it" scale={scale} boxes={masks.map((rect, i) => ({ rect, kind: 'proposed', label: `Mask ${i + 1}` }))} />
      )}
    </section>
  );
}
