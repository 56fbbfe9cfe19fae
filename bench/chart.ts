import type { RunSummary } from './stats.js';

const COLOURS: Record<string, string> = {
  service: '#2563eb',
  raw: '#f59e0b',
  'new-browser': '#9ca3af',
  'capture-website': '#db2777',
  browserless: '#7c3aed',
  floor: '#10b981',
};
const FONT = 'font-family="system-ui, sans-serif"';

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A round axis maximum above `value`: 1, 2 or 5 times a power of ten. */
function niceMax(value: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(value, 1e-9)));
  return [1, 2, 5, 10].map((m) => m * power).find((m) => m >= value) ?? 10 * power;
}

interface Panel {
  title: string;
  unit: string;
  value: (r: RunSummary) => number;
}

/**
 * Grouped bars, one group per concurrency and one bar per method: throughput on the left,
 * median latency on the right. Plain SVG, readable in a browser or on a repository page.
 */
export function benchmarkChart(runs: RunSummary[], caption: string): string {
  const width = 960;
  const height = 420;
  const panels: Panel[] = [
    { title: 'Throughput (captures/s, higher is better)', unit: '/s', value: (r) => r.capturesPerSecond },
    { title: 'Latency p50 (ms, lower is better)', unit: ' ms', value: (r) => r.p50Ms },
  ];
  const methods = [...new Set(runs.map((r) => r.method))];
  const levels = [...new Set(runs.map((r) => r.concurrency))].sort((a, b) => a - b);
  const panelWidth = width / 2 - 60;
  const top = 60;
  const plotHeight = height - top - 90;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
  ];
  panels.forEach((panel, p) => {
    const left = 60 + p * (width / 2);
    const max = niceMax(Math.max(...runs.map(panel.value)) * 1.1);
    parts.push(`<text x="${left}" y="${top - 25}" font-size="14" font-weight="600">${escapeXml(panel.title)}</text>`);
    for (let t = 0; t <= 4; t++) {
      const y = top + plotHeight - (t / 4) * plotHeight;
      const label = max * (t / 4);
      parts.push(`<line x1="${left}" x2="${left + panelWidth}" y1="${y}" y2="${y}" stroke="#e5e7eb"/>`);
      parts.push(`<text x="${left - 6}" y="${y + 4}" text-anchor="end" fill="#6b7280">${label >= 10 ? Math.round(label) : label.toFixed(1)}</text>`);
    }
    const groupWidth = panelWidth / levels.length;
    const barWidth = Math.min(48, (groupWidth - 20) / methods.length);
    levels.forEach((level, g) => {
      const groupLeft = left + g * groupWidth + (groupWidth - barWidth * methods.length) / 2;
      methods.forEach((method, m) => {
        const run = runs.find((r) => r.method === method && r.concurrency === level);
        if (!run) return;
        const value = panel.value(run);
        const h = (value / max) * plotHeight;
        const x = groupLeft + m * barWidth;
        const y = top + plotHeight - h;
        parts.push(`<rect x="${x + 2}" y="${y}" width="${barWidth - 4}" height="${h}" fill="${COLOURS[method] ?? '#6b7280'}"/>`);
        const text = value >= 100 ? Math.round(value).toString() : value.toFixed(2);
        parts.push(`<text x="${x + barWidth / 2}" y="${y - 4}" text-anchor="middle" font-size="10">${text}</text>`);
      });
      parts.push(`<text x="${left + g * groupWidth + groupWidth / 2}" y="${top + plotHeight + 18}" text-anchor="middle">concurrency ${level}</text>`);
    });
  });
  methods.forEach((method, m) => {
    const x = 60 + m * 160;
    parts.push(`<rect x="${x}" y="${height - 50}" width="14" height="14" fill="${COLOURS[method] ?? '#6b7280'}"/>`);
    parts.push(`<text x="${x + 20}" y="${height - 39}">${escapeXml(method)}</text>`);
  });
  parts.push(`<text x="60" y="${height - 14}" fill="#6b7280" font-size="11">${escapeXml(caption)}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

/** One soak sample: after `captures` captures. */
export interface SoakSample {
  captures: number;
  serverRssMiB: number;
  browsersPssMiB: number;
  serverFds: number;
  processes: number;
}

/** Lines of memory (left axis) and descriptors (right axis) over the captures of a soak run. */
export function soakChart(samples: SoakSample[], caption: string): string {
  const width = 960;
  const height = 360;
  const left = 70;
  const right = width - 70;
  const top = 40;
  const bottom = height - 80;
  const maxCaptures = Math.max(...samples.map((s) => s.captures), 1);
  const maxMiB = niceMax(Math.max(...samples.flatMap((s) => [s.serverRssMiB, s.browsersPssMiB])) * 1.1);
  const maxFds = niceMax(Math.max(...samples.map((s) => s.serverFds)) * 1.1);
  const x = (c: number) => left + (c / maxCaptures) * (right - left);
  const yMiB = (v: number) => bottom - (v / maxMiB) * (bottom - top);
  const yFds = (v: number) => bottom - (v / maxFds) * (bottom - top);
  const line = (points: Array<[number, number]>, colour: string, dashed = false) =>
    `<polyline fill="none" stroke="${colour}" stroke-width="2"${dashed ? ' stroke-dasharray="6 4"' : ''} points="${points.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' ')}"/>`;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="24" font-size="14" font-weight="600">Soak: memory and open descriptors over ${maxCaptures} captures</text>`,
  ];
  for (let t = 0; t <= 4; t++) {
    const y = bottom - (t / 4) * (bottom - top);
    parts.push(`<line x1="${left}" x2="${right}" y1="${y}" y2="${y}" stroke="#e5e7eb"/>`);
    parts.push(`<text x="${left - 6}" y="${y + 4}" text-anchor="end" fill="#6b7280">${Math.round((maxMiB * t) / 4)} MiB</text>`);
    parts.push(`<text x="${right + 6}" y="${y + 4}" fill="#6b7280">${Math.round((maxFds * t) / 4)} fds</text>`);
  }
  for (let t = 0; t <= 4; t++) {
    const c = Math.round((maxCaptures * t) / 4);
    parts.push(`<line x1="${x(c)}" x2="${x(c)}" y1="${bottom}" y2="${bottom + 5}" stroke="#9ca3af"/>`);
    parts.push(`<text x="${x(c)}" y="${bottom + 18}" text-anchor="middle" fill="#6b7280">${c}</text>`);
  }
  parts.push(line(samples.map((s) => [x(s.captures), yMiB(s.serverRssMiB)]), '#2563eb'));
  parts.push(line(samples.map((s) => [x(s.captures), yMiB(s.browsersPssMiB)]), '#f59e0b'));
  parts.push(line(samples.map((s) => [x(s.captures), yFds(s.serverFds)]), '#10b981', true));
  parts.push(`<text x="${(left + right) / 2}" y="${bottom + 34}" text-anchor="middle">captures</text>`);
  const legend: Array<[string, string]> = [
    ['#2563eb', 'service RSS'],
    ['#f59e0b', 'browsers PSS'],
    ['#10b981', 'service open fds (right axis)'],
  ];
  legend.forEach(([colour, label], i) => {
    parts.push(`<rect x="${left + i * 220}" y="${height - 30}" width="14" height="4" fill="${colour}"/>`);
    parts.push(`<text x="${left + i * 220 + 20}" y="${height - 24}">${label}</text>`);
  });
  parts.push(`<text x="${left}" y="${height - 6}" fill="#6b7280" font-size="11">${escapeXml(caption)}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}
