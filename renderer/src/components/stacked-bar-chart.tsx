export interface ChartSeries {
  name: string;
  /** A CSS colour, usually a custom property such as var(--chart-1). */
  color: string;
}

export interface ChartBar {
  /** Read in the tooltip, e.g. "20 Nov, 14:00". */
  label: string;
  /** Written under the bar; leave empty to skip crowded labels. */
  tick?: string;
  /** One value per series, in series order. */
  values: number[];
}

export interface StackedBarChartProps {
  series: ChartSeries[];
  bars: ChartBar[];
  /** Says in words what the chart shows, for screen readers. */
  description: string;
  height?: number;
}

/** The gridline step: 1, 2 or 5 times a power of ten, so axis numbers read well. */
export function niceStep(rawStep: number): number {
  if (rawStep <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(rawStep));
  const scaled = rawStep / power;
  return (scaled <= 1 ? 1 : scaled <= 2 ? 2 : scaled <= 5 ? 5 : 10) * power;
}

const WIDTH = 720;
const LEFT = 40;
// Room for the last tick label, centred under the last bar.
const RIGHT = 24;
const BOTTOM = 22;
const TOP = 8;
const LINES = 4;

/** A small hand-drawn SVG bar chart; each bar stacks one segment per series. */
export function StackedBarChart({ series, bars, description, height = 180 }: StackedBarChartProps) {
  const totals = bars.map((b) => b.values.reduce((a, v) => a + v, 0));
  const step = niceStep(Math.max(...totals, 0) / LINES);
  const top = step * LINES;
  const plotH = height - TOP - BOTTOM;
  const slot = (WIDTH - LEFT - RIGHT) / Math.max(bars.length, 1);
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => TOP + plotH - (v / top) * plotH;

  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${height}`} role="img" aria-label={description}>
        {Array.from({ length: LINES + 1 }, (_, i) => {
          const v = step * i;
          return (
            <g key={i} class="chart-grid">
              <line x1={LEFT} x2={WIDTH - RIGHT} y1={y(v)} y2={y(v)} />
              <text x={LEFT - 6} y={y(v) + 4} text-anchor="end">
                {v}
              </text>
            </g>
          );
        })}
        {bars.map((bar, i) => {
          const x = LEFT + i * slot + (slot - barW) / 2;
          let base = 0;
          return (
            <g key={bar.label}>
              {bar.values.map((v, s) => {
                if (v <= 0) return null;
                const rect = (
                  <rect key={s} x={x} y={y(base + v)} width={barW} height={y(base) - y(base + v)} fill={series[s]!.color} rx={1.5}>
                    <title>{`${bar.label} — ${series[s]!.name}: ${v}`}</title>
                  </rect>
                );
                base += v;
                return rect;
              })}
              {bar.tick && (
                <text class="chart-tick" x={x + barW / 2} y={height - 6} text-anchor="middle">
                  {bar.tick}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      {series.length > 0 && (
        <figcaption>
          <ul class="legend">
            {series.map((s) => (
              <li key={s.name}>
                <span class="swatch" style={{ background: s.color }} aria-hidden="true" />
                {s.name}
              </li>
            ))}
          </ul>
        </figcaption>
      )}
    </figure>
  );
}
