import type { CaptureWarning } from '../admin-types.js';

/** Each warning code in a few words, for people. */
const TITLES: Record<CaptureWarning['code'], string> = {
  blank: 'Blank picture',
  images_not_loaded: 'Images not loaded',
  fonts_not_loaded: 'Fonts not loaded',
  placeholders: 'Still loading',
  overlay: 'Overlay over the page',
  login_page: 'Sign-in page',
  truncated: 'Cut',
  http_error: 'HTTP error',
  console_errors: 'Console errors',
  network_busy: 'Network busy',
  not_settled: 'Not settled',
  extract_failed: 'Extraction failed',
  upload_failed: 'Upload to the storage destination failed',
};

/** A warning code in the words the job warnings use (a monitor's inconclusive_codes too); an unknown code as it is. */
export const warningTitle = (code: string): string => TITLES[code as CaptureWarning['code']] ?? code;

const count = (n: number) => `${n} warning${n === 1 ? '' : 's'}`;

/** A mark in the job list: how many warnings a completed job has, the codes on hover. Nothing when there are none. */
export function WarningMark({ warnings }: { warnings: CaptureWarning[] }) {
  if (warnings.length === 0) return null;
  const titles = warnings.map((w) => TITLES[w.code]).join(', ');
  return (
    <span class="warn-mark" title={titles} aria-label={`${count(warnings.length)}: ${titles}`} data-warnings={warnings.map((w) => w.code).join(' ')}>
      <span aria-hidden="true">⚠ {warnings.length}</span>
    </span>
  );
}

/** The warnings of a completed job, each with its code and message; says so when there are none. */
export function WarningList({ warnings }: { warnings: CaptureWarning[] }) {
  return (
    <section class="sub-section" aria-label="Warnings">
      <h3>Warnings</h3>
      {warnings.length === 0 ? (
        <p class="muted">None: nothing wrong was found with the picture.</p>
      ) : (
        <ul class="warning-list">
          {warnings.map((w) => (
            <li key={w.code} data-code={w.code}>
              <strong>{TITLES[w.code]}</strong> <code>{w.code}</code>
              <div>{w.message}</div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
