import { useState } from 'preact/hooks';

import type { MonitorCheck } from '../admin-types.js';
import { formatAbsolute } from '../format-time.js';

type Mode = 'side' | 'overlay' | 'diff';

/** Two checks of a monitor: side by side, one over the other with a slider, or the newer one's diff picture. */
export function MonitorCompare({ older, newer }: { older: MonitorCheck; newer: MonitorCheck }) {
  const [mode, setMode] = useState<Mode>('side');
  const [split, setSplit] = useState(50);
  const picture = (check: MonitorCheck) => (check.screenshot_url ? <img src={check.screenshot_url} alt={`Check of ${formatAbsolute(check.at)}`} /> : <p class="muted">No picture</p>);
  return (
    <div class="card monitor-compare">
      <div class="card-head">
        <h2 class="card-title">
          {formatAbsolute(older.at)} → {formatAbsolute(newer.at)}
        </h2>
        <div class="segmented" role="group" aria-label="Comparison">
          {(['side', 'overlay', 'diff'] as const).map((m) => (
            <button type="button" key={m} class="button small" aria-pressed={mode === m} onClick={() => setMode(m)}>
              {m === 'side' ? 'Side by side' : m === 'overlay' ? 'Overlay' : 'Diff'}
            </button>
          ))}
        </div>
      </div>
      {mode === 'side' && (
        <div class="compare-side">
          <figure>
            {picture(older)}
            <figcaption>{formatAbsolute(older.at)}</figcaption>
          </figure>
          <figure>
            {picture(newer)}
            <figcaption>{formatAbsolute(newer.at)}</figcaption>
          </figure>
        </div>
      )}
      {mode === 'overlay' && (
        <div class="compare-overlay">
          <div class="overlay-stack">
            {picture(older)}
            <div class="overlay-top" style={{ clipPath: `inset(0 0 0 ${split}%)` }}>
              {picture(newer)}
            </div>
          </div>
          <label class="field">
            <span class="field-label">Older ← → newer</span>
            <input type="range" min={0} max={100} value={split} onInput={(e) => setSplit(Number(e.currentTarget.value))} aria-label="Where the newer picture starts" />
          </label>
        </div>
      )}
      {mode === 'diff' &&
        (newer.diff_url ? (
          <figure class="compare-diff">
            <img src={newer.diff_url} alt="Changed pixels in red over the newer picture" />
            <figcaption>{newer.difference === null ? '' : `${(newer.difference * 100).toFixed(3)} % of the pixels differ from its baseline`}</figcaption>
          </figure>
        ) : (
          <p class="muted">No pixel of the newer check differs from its baseline.</p>
        ))}
    </div>
  );
}
