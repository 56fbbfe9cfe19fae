/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), independent of
 * prom-client: what a Prometheus server would refuse, it throws on.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** A value as Prometheus reads it (Go's ParseFloat: `NaN` and `Inf` in any case, as prom-client may write `Nan`). */
function parseValue(raw: string, line: string): number {
  if (/^\+?inf(inity)?$/i.test(raw)) return Infinity;
  if (/^-inf(inity)?$/i.test(raw)) return -Infinity;
  if (/^nan$/i.test(raw)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`not a number: ${raw} in ${line}`);
  return Number(raw);
}

/** Reads `name{a="b",…} value [timestamp]`. */
function parseSample(line: string): Sample {
  let i = 0;
  while (i < line.length && /[a-zA-Z0-9_:]/.test(line[i])) i++;
  const name = line.slice(0, i);
  if (!METRIC_NAME.test(name)) throw new Error(`bad metric name in ${line}`);
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    while (line[i] !== '}') {
      const start = i;
      while (i < line.length && /[a-zA-Z0-9_]/.test(line[i])) i++;
      const label = line.slice(start, i);
      if (!LABEL_NAME.test(label) || label.startsWith('__')) throw new Error(`bad label name "${label}" in ${line}`);
      if (line[i++] !== '=' || line[i++] !== '"') throw new Error(`expected ="… after ${label} in ${line}`);
      let value = '';
      for (;;) {
        if (i >= line.length) throw new Error(`unterminated label value in ${line}`);
        const c = line[i++];
        if (c === '"') break;
        if (c === '\\') {
          const e = line[i++];
          if (e === 'n') value += '\n';
          else if (e === '\\' || e === '"') value += e;
          else throw new Error(`bad escape \\${e} in ${line}`);
        } else value += c;
      }
      if (label in labels) throw new Error(`label ${label} twice in ${line}`);
      labels[label] = value;
      if (line[i] === ',') i++;
      else if (line[i] !== '}') throw new Error(`expected , or } in ${line}`);
    }
    i++;
  }
  if (line[i] !== ' ') throw new Error(`expected a space before the value in ${line}`);
  const parts = line.slice(i + 1).split(' ');
  if (parts.length > 2 || parts[0] === '') throw new Error(`bad value part in ${line}`);
  if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`bad timestamp in ${line}`);
  return { name, labels, value: parseValue(parts[0], line) };
}

/** The family a sample belongs to: histograms and summaries add suffixes to their name. */
function familyOf(sample: string, families: Map<string, Family>): Family | undefined {
  const exact = families.get(sample);
  if (exact) return exact;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sample.endsWith(suffix)) continue;
    const family = families.get(sample.slice(0, -suffix.length));
    if (family && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return family;
  }
  return undefined;
}

const seriesKey = (s: Sample) => `${s.name}{${Object.entries(s.labels).sort().map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;

/** Checks a histogram's buckets: `le` increasing, counts cumulative, `+Inf` equal to `_count`. */
function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; count?: number; sum?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const group = groups.get(key) ?? { buckets: [] };
    groups.set(key, group);
    if (s.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      group.buckets.push([parseValue(le, s.name), s.value]);
    } else if (s.name.endsWith('_count')) group.count = s.value;
    else if (s.name.endsWith('_sum')) group.sum = s.value;
    else throw new Error(`${family.name}: a histogram sample ${s.name}`);
  }
  for (const [key, g] of groups) {
    if (g.count === undefined || g.sum === undefined) throw new Error(`${family.name}${key}: _count or _sum missing`);
    for (let k = 1; k < g.buckets.length; k++) {
      if (!(g.buckets[k][0] > g.buckets[k - 1][0])) throw new Error(`${family.name}${key}: le not increasing`);
      if (g.buckets[k][1] < g.buckets[k - 1][1]) throw new Error(`${family.name}${key}: bucket counts not cumulative`);
    }
    const last = g.buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new Error(`${family.name}${key}: no +Inf bucket`);
    if (last[1] !== g.count) throw new Error(`${family.name}${key}: +Inf bucket ${last[1]} is not _count ${g.count}`);
  }
}

export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  const seen = new Set<string>();
  let current: Family | undefined;
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) ([^ ]+) ?(.*)$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest] = m;
      if (!METRIC_NAME.test(name)) throw new Error(`bad metric name in ${line}`);
      if (closed.has(name)) throw new Error(`${name} appears in two groups`);
      let family = families.get(name);
      if (!family) {
        if (current) closed.add(current.name);
        family = { name, type: 'untyped', help: '', samples: [] };
        families.set(name, family);
        current = family;
      } else if (family !== current) throw new Error(`${name}: its metadata is split`);
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`unknown type ${rest} for ${name}`);
        if (family.samples.length) throw new Error(`${name}: TYPE after its samples`);
        family.type = rest as MetricType;
      } else family.help = rest;
      continue;
    }
    const sample = parseSample(line);
    const family = familyOf(sample.name, families);
    if (!family) throw new Error(`sample ${sample.name} has no TYPE or HELP before it`);
    if (family !== current) throw new Error(`sample ${sample.name} outside its family's group`);
    const key = seriesKey(sample);
    if (seen.has(key)) throw new Error(`series ${key} twice`);
    seen.add(key);
    if (family.type === 'counter' && !(sample.value >= 0)) throw new Error(`counter ${key} is ${sample.value}`);
    family.samples.push(sample);
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The value of one series (labels must match exactly those given), or undefined. */
export function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name !== name) continue;
      const keys = Object.keys(s.labels);
      if (keys.length === Object.keys(labels).length && keys.every((k) => s.labels[k] === labels[k])) return s.value;
    }
  }
  return undefined;
}

/** The sum of a metric's series whose labels include those given. */
export function sumOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
    }
  }
  return sum;
}
