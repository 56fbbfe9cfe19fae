// Times on screen: relative for scanning ("3 min ago"), the exact local time in a tooltip.

/** Parses both ISO 8601 and the v1 API's `YYYY-MM-DD HH:MM:SS` (UTC) form. */
export function parseTime(text: string): Date {
  return /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(text) ? new Date(`${text.replace(' ', 'T')}Z`) : new Date(text);
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });
const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

export function formatAbsolute(text: string): string {
  const d = parseTime(text);
  return Number.isNaN(d.getTime()) ? text : absolute.format(d);
}

export function formatRelative(text: string, now = Date.now()): string {
  const d = parseTime(text);
  if (Number.isNaN(d.getTime())) return text;
  const seconds = Math.round((d.getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return seconds <= 0 ? 'just now' : 'in a moment';
  if (abs < 3600) return relative.format(Math.round(seconds / 60), 'minute');
  if (abs < 86_400) return relative.format(Math.round(seconds / 3600), 'hour');
  return relative.format(Math.round(seconds / 86_400), 'day');
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1000) return `${ms} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}
