import { useState } from 'preact/hooks';

import type { MonitorCheck } from '../admin-types.js';
import { formatAbsolute } from '../format-time.js';
import { BoxedPicture, type PictureBox } from './boxed-picture.js';
import { CheckFindings, CheckOutcome } from './check-findings.js';

type Mode = 'side' | 'overlay' | 'diff';

/** The boxes of a check's regions on one of its two pictures: `before` on its baseline's, `after` on its own. */
const regionBoxes = (check: MonitorCheck, side: 'before' | 'after'): PictureBox[] =>
  check.regions.flatMap((r) => (r[side] ? [{ rect: r[side]!, kind: r.kind, label: `${r.kind} region` }] : []));

/**
 * Two checks of a monitor: what the newer one found against its baseline (its text change
 * first), then the pictures side by side with the regions drawn over them, one over the other
 * with a slider, or the newer one's diff picture.
 */
export function MonitorCompare({ older, newer, scale = 1 }: { older: MonitorCheck; newer: MonitorCheck; scale?: number }) {
  const [mode, setMode] = useState<Mode>('side');
  const [split, setSplit] = useState(50);
  // The regions' `before` rectangles are on the newer check's baseline; on another check they would mislead.
  const againstOlder = newer.baseline_job_id !== null && newer.baseline_job_id === older.job_id;
  const picture = (check: MonitorCheck, boxes: PictureBox[] = []) =>
    check.screenshot_url ? <BoxedPicture src={check.screenshot_url} alt={`Check of ${formatAbsolute(check.at)}`} boxes={boxes} scale={check.picture_scale ?? scale} /> : <p class="muted">No picture</p>;
  const plain = (check: MonitorCheck) => (check.screenshot_url ? <img src={check.screenshot_url} alt={`Check of ${formatAbsolute(check.at)}`} /> : <p class="muted">No picture</p>);
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
      <section class="compare-findings" aria-label="What changed">
        <h3>
          What the newer check found <CheckOutcome check={newer} />
        </h3>
        {!againstOlder && newer.baseline_job_id && <p class="muted small">Against its own baseline, not the older check shown here.</p>}
        <CheckFindings check={newer} />
      </section>
      {mode === 'side' && (
        <div class="compare-side">
          <figure>
            {picture(older, againstOlder ? regionBoxes(newer, 'before') : [])}
            <figcaption>{formatAbsolute(older.at)}</figcaption>
          </figure>
          <figure>
            {picture(newer, regionBoxes(newer, 'after'))}
            <figcaption>{formatAbsolute(newer.at)}</figcaption>
          </figure>
        </div>
      )}
      {mode === 'overlay' && (
        <div class="compare-overlay">
          <div class="overlay-stack">
            {plain(older)}
            <div class="overlay-top" style={{ clipPath: `inset(0 0 0 ${split}%)` }}>
              {plain(newer)}
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
