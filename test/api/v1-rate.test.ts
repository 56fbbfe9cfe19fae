import { describe, expect, it } from 'vitest';

import { stillClock } from '../helpers/still-clock.js';
import { testServerForFile } from '../helpers/test-server.js';

const time = stillClock();
// Not the default 10: the refusal must name the rate the service was started with.
const server = testServerForFile({ ratePerSecond: 3 }, { clock: time.clock });

describe('the per-account requests per second', () => {
  it('answers 429 past the configured rate and names that rate', async () => {
    const { key } = await server.account();
    const answers = await time.still(() => Promise.all(Array.from({ length: 5 }, () => server.v1('GET', '/usage', key))));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(3);
    const refused = answers.find((r) => r.status === 429)!;
    expect(await refused.json()).toMatchObject({
      error: 'Rate limit exceeded',
      message: 'Too many requests: the limit is 3 requests per second per account',
    });
  });
});
