import { beforeEach } from 'vitest';

import { clearOfMidnight } from './clear-of-midnight.js';

// Every test starts at least 30 s before 00:00 UTC or just after it (see clear-of-midnight.ts):
// a test that counts calls reads them on the day it made them. Tests that take longer, or whose
// clock runs ahead, ask for more themselves.
beforeEach(() => clearOfMidnight(30_000), 45_000);
