import { describe, expect, it } from 'vitest';

import { pattern } from '../../server/api/batch-params.js';
import { ValidationError } from '../../server/domain-errors.js';

describe("a batch's include and exclude patterns", () => {
  it.each(['/blog/', '\\.pdf$', '^https://example\\.com/(en|fr)/', '/(?:docs|guides)/v\\d+/', '(?<year>\\d{4})/', '[(+*]+x', '/a{2,3}b'])(
    'takes %s, which runs in linear time',
    (source) => {
      expect(pattern('include', source)).toEqual(new RegExp(source));
    },
  );

  it.each(['(a+)+$', '(x|xx)*y', '(\\d+)*', '((ab)*c)+', '(?:a|b)+', '(a)\\1', '(?<n>a)\\k<n>', '(a*){2,}'])(
    'refuses %s, which could backtrack without end',
    (source) => {
      expect(() => pattern('exclude', source)).toThrow(ValidationError);
      expect(() => pattern('exclude', source)).toThrow(/^exclude may not repeat a group/);
    },
  );

  it('refuses a pattern that does not parse, naming the field', () => {
    expect(() => pattern('include', '(')).toThrow(/^include is not a valid regular expression/);
  });
});
