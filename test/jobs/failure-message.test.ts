import { describe, expect, it } from 'vitest';

import { describeFailure } from '../../server/jobs/job-failure.js';
import { StoreUnavailableError } from '../../server/store/stores.js';

describe('describeFailure', () => {
  it("says a capture could not be stored because the database did not answer, without the driver's words", () => {
    const failure = describeFailure(new StoreUnavailableError(new Error('connect ECONNREFUSED 10.0.0.5:5432')), new AbortController().signal);
    expect(failure).toEqual({ message: 'Could not store the screenshot: the database did not answer', internal: true });
  });
});
