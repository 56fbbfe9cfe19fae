import type { DeviceName } from '../../server/capture/presets.js';
import type { AppName } from '../helpers/apps.js';
import type { AppView } from '../helpers/apps-reference.js';

// The pages of the apps corpus (test/apps/apps-corpus.test.ts; bench/apps-mix.ts measures them
// too): which app, which page, on which presets, and how a person tells it has finished drawing.

/** One page of a running app, as the apps corpus captures it. */
export interface AppCase {
  id: string;
  app: AppName;
  view: AppView;
  presets: DeviceName[];
  /** Draws after `load` (by script, from its API): it is caught early too (at `load`, and with a short settle cap). */
  live: boolean;
  /**
   * Why, caught at `load` (no wait run), nothing in its unfinished picture can tell it from a
   * finished one: that case is measured and shown, and not held to a warning. The short settle
   * cap must still notice.
   */
  silentAtLoad?: string;
  /** The warning the default capture must carry (the view is not the app). */
  warns?: string;
  /**
   * A settle cap longer than the default's 8 s, as a user of this app gives it (settle_timeout):
   * the app itself takes about that long to draw, so the default cap is reached on a busy machine.
   */
  settleTimeoutMs?: number;
}

const inView = (element: Element) => {
  const r = element.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < innerHeight;
};

export const APP_CASES: AppCase[] = [
  {
    id: 'prometheus-graph',
    app: 'prometheus',
    // The classic graph page over the last minute of its own CPU use, drawn by script from
    // /api/v1/query_range. Drawn: the plot's path has points, the legend is there, the spinner gone.
    view: {
      path: '/classic/graph?g0.expr=rate(process_cpu_seconds_total%5B5s%5D)&g0.tab=0&g0.range_input=1m',
      drawn: () =>
        [...document.querySelectorAll('.graph_area svg path.path')].some((p) => (p.getAttribute('d') ?? '').length > 50) &&
        document.querySelectorAll('.legend .line').length > 0 &&
        ![...document.querySelectorAll('.spinner')].some((s) => s.getBoundingClientRect().width > 0),
      parts: ['.graph_area', '.legend'],
    },
    presets: ['desktop', 'mobile'],
    live: true,
  },
  {
    id: 'netdata-overview',
    app: 'netdata',
    // The dashboard's System Overview over its last minute, refreshed every second
    // (`update_always`: refresh even when the page has no focus, as a headless page has not), its
    // gauges and charts filled by script from /api/v1/data. Drawn: every gauge in the viewport shows
    // a number, not "-" (the charts are filled by the same round of requests; the grace draws them).
    // Its ink is measured over the gauges' figures and the charts, not the gauges' arcs, whose ink
    // follows the values: a disk gauge at 0 has a seventh of the ink of one at 9 MiB/s, so a quiet
    // moment against a busy reference read as 0.65 drawn.
    view: {
      path: '/#after=-60;before=0;update_always=true',
      drawn: () => {
        const visible = (e: Element) => {
          const r = e.getBoundingClientRect();
          return r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < innerHeight;
        };
        const figures = [...document.querySelectorAll('.easyPieChartLabel, .gaugeChartLabel')].filter(visible);
        return figures.length >= 6 && figures.every((f) => /\d/.test(f.textContent ?? ''));
      },
      parts: ['.easyPieChartLabel', '.gaugeChartLabel', '[id^="dygraph-system."] canvas'],
    },
    presets: ['desktop'],
    live: true,
    silentAtLoad: 'at load its gauges and charts are empty areas of the page, not yet a loading state (then loading icons, then "-")',
    // Its gauges still show "-" 4 s after load on an idle machine (every time, in four runs), and
    // were filled 6 to 9 s after it on a busy one: at the default cap, now and then not_settled.
    settleTimeoutMs: 15_000,
  },
  {
    id: 'transmission-list',
    app: 'transmission',
    // The web interface's list of transfers, filled by script from its RPC. Drawn: the transfer's
    // row shows its name, its progress bar and its details.
    view: {
      path: '/transmission/web/',
      drawn: () =>
        [...document.querySelectorAll('#torrent_list .torrent')].some(
          (row) => (row.querySelector('.torrent_name')?.textContent ?? '') !== '' && (row.querySelector('.torrent_progress_details')?.textContent ?? '') !== '',
        ),
      parts: ['#torrent_list', '#torrent_container'],
    },
    presets: ['desktop', 'mobile'],
    live: true,
    silentAtLoad: 'before its rows are drawn it shows an empty list ("0 Transfers"), as it does with no transfers',
  },
  {
    id: 'dokuwiki-syntax',
    app: 'dokuwiki',
    // A page rendered by the server: drawn once loaded and its fonts are in.
    view: {
      path: '/doku.php?id=wiki:syntax',
      drawn: () => document.readyState === 'complete' && document.fonts.status === 'loaded',
      parts: ['.page'],
    },
    presets: ['desktop', 'mobile'],
    live: false,
  },
  {
    id: 'dokuwiki-login',
    app: 'dokuwiki',
    // Its sign-in form: what a capture of an app behind a login shows.
    view: {
      path: '/doku.php?id=start&do=login',
      drawn: () => document.readyState === 'complete' && document.querySelector('#dw__login') !== null,
      parts: ['#dw__login'],
    },
    presets: ['desktop'],
    live: false,
    warns: 'login_page',
  },
  {
    id: 'glances-web',
    app: 'glances',
    view: {
      path: '/',
      drawn: () => [...document.querySelectorAll('#cpu, .plugin')].some(inView),
      parts: ['#cpu', '.plugin'],
    },
    presets: ['desktop'],
    live: true,
  },
];
