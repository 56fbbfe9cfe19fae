import { describe, expect, it } from 'vitest';

import { parsePrometheusText, valueOf } from './prom-text.js';

describe('the exposition reader used by the metrics tests', () => {
  it('reads families, labels with escapes and histograms', () => {
    const families = parsePrometheusText(
      [
        '# HELP a_total A counter',
        '# TYPE a_total counter',
        'a_total{path="/x\\"y\\\\z"} 3',
        '# TYPE h histogram',
        'h_bucket{le="1"} 1',
        'h_bucket{le="+Inf"} 2',
        'h_sum 4.5',
        'h_count 2',
        '',
      ].join('\n'),
    );
    expect(valueOf(families, 'a_total', { path: '/x"y\\z' })).toBe(3);
    expect(families.get('h')!.samples).toHaveLength(4);
  });

  it.each([
    ['no trailing newline', '# TYPE a gauge\na 1'],
    ['a sample without TYPE', 'a 1\n'],
    ['a series twice', '# TYPE a gauge\na{x="1"} 1\na{x="1"} 2\n'],
    ['a negative counter', '# TYPE a_total counter\na_total -1\n'],
    ['buckets that are not cumulative', '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'],
    ['a +Inf bucket other than the count', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n'],
    ['a family split in two groups', '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# TYPE a gauge\n'],
    ['a bad escape', '# TYPE a gauge\na{x="\\t"} 1\n'],
    ['a value that is no number', '# TYPE a gauge\na one\n'],
  ])('refuses %s', (_, text) => {
    expect(() => parsePrometheusText(text)).toThrow();
  });
});
