import type { MonitorCheck } from '../admin-types.js';
import { warningTitle } from '../components/capture-warnings.js';

type Region = MonitorCheck['regions'][number];
type Rect = NonNullable<Region['before']>;

/** A check's outcome in a word: its verdict, or failed, skipped, running. An inconclusive one says which warnings decided it. */
export function CheckOutcome({ check }: { check: Pick<MonitorCheck, 'status' | 'changed' | 'verdict'> & { inconclusive_codes?: string[] } | null }) {
  if (!check) return <span class="muted">No check yet</span>;
  const verdict = check.verdict ?? (check.status !== 'completed' ? null : check.changed === null ? 'first' : check.changed ? 'changed' : 'unchanged');
  const [word, tone] =
    verdict === 'changed' ? ['Changed', 'changed']
    : verdict === 'unchanged' ? ['Unchanged', 'completed']
    : verdict === 'first' ? ['First picture', 'completed']
    : verdict === 'inconclusive' ? ['Inconclusive', 'inconclusive']
    : check.status === 'failed' ? ['Failed', 'failed']
    : check.status === 'skipped' ? ['Skipped', 'failed']
    : ['Running', 'processing'];
  const codes = verdict === 'inconclusive' ? (check.inconclusive_codes ?? []) : [];
  return (
    <>
      <span class={`badge badge-${tone}`}>{word}</span>
      {codes.length > 0 && <span class="inconclusive-codes" data-codes={codes.join(' ')}>{` ${codes.map(warningTitle).join(', ')}`}</span>}
    </>
  );
}

/**
 * The lines of the page's text a check lost and gained, like a diff: removed first, then added,
 * at most `limit` of each (the server keeps at most 20 of each, 200 characters long).
 */
export function TextChange({ change, limit = 20 }: { change: NonNullable<MonitorCheck['text_change']>; limit?: number }) {
  const more = (lines: string[]) => (lines.length > limit ? <li class="text-diff-more muted">and {lines.length - limit} more</li> : null);
  return (
    <ul class="text-diff" aria-label="Text change">
      {change.removed.slice(0, limit).map((line, i) => (
        <li key={`r${i}`} class="text-diff-removed">
          <del>
            <span aria-hidden="true">− </span>
            {line}
          </del>
        </li>
      ))}
      {more(change.removed)}
      {change.added.slice(0, limit).map((line, i) => (
        <li key={`a${i}`} class="text-diff-added">
          <ins>
            <span aria-hidden="true">+ </span>
            {line}
          </ins>
        </li>
      ))}
      {more(change.added)}
    </ul>
  );
}

const KIND_WORDS: Record<Region['kind'], string> = { changed: 'Changed area', inserted: 'Inserted block', removed: 'Removed block', moved: 'Moved block' };

const rectText = (r: Rect) => `${Math.round(r.width)} × ${Math.round(r.height)} at (${Math.round(r.x)}, ${Math.round(r.y)})`;

/** Where a region is, in words: in the newer picture, the older one, or moved from one place to the other. */
function regionWhere(region: Region): string {
  if (region.kind === 'moved' && region.before && region.after) return `${rectText(region.before)} → y ${Math.round(region.after.y)}`;
  if (region.after) return rectText(region.after);
  return region.before ? `${rectText(region.before)} in the older picture` : '';
}

/** The change regions of a check, each as its kind and where it is (CSS px), at most `limit`. */
export function RegionList({ regions, limit = 50 }: { regions: MonitorCheck['regions']; limit?: number }) {
  return (
    <ul class="region-list" aria-label="Change regions">
      {regions.slice(0, limit).map((r, i) => (
        <li key={i} class={`region-item region-${r.kind}`}>
          <span class={`region-kind region-${r.kind}`}>{KIND_WORDS[r.kind]}</span> <span class="muted">{regionWhere(r)}</span>
        </li>
      ))}
      {regions.length > limit && <li class="muted">and {regions.length - limit} more</li>}
    </ul>
  );
}

/** The pixel figure of a compared check. */
export const pixelFigure = (check: MonitorCheck): string | null => (check.difference === null ? null : `${(check.difference * 100).toFixed(3)} % of the pixels differ`);

/**
 * What a check found, in the order people read it: the text change, then "only pixels changed",
 * then the regions, then the pixel figure. `compact` (the timeline) keeps a few lines of each.
 */
export function CheckFindings({ check, compact = false }: { check: MonitorCheck; compact?: boolean }) {
  const figure = pixelFigure(check);
  return (
    <div class="check-findings">
      {check.mask_probe && <p class="muted small mask-probe">Second picture of the first baseline, taken to propose masks where the two differ; it alerts no one.</p>}
      {check.text_change && <TextChange change={check.text_change} limit={compact ? 3 : 20} />}
      {check.pixels_only && <p class="pixels-only">Only pixels changed: the page's text is the same.</p>}
      {check.regions.length > 0 && <RegionList regions={check.regions} limit={compact ? 3 : 50} />}
      {figure && <p class="muted small pixel-figure">{figure}</p>}
      {check.error && <p class="muted small">{check.error}</p>}
    </div>
  );
}
