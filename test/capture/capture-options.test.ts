import { describe, it } from 'vitest';

import { HOST_RESOLVER_RULES } from '../fixtures/blocking-pages.js';
import { engineWithFixtures } from '../helpers/capture-engine.js';
import type { ConformanceHooks } from './conformance-cases.js';
import { optionCases } from './option-cases.js';

// The capture options against the headless engine; the same cases run inside Electron
// (test/electron/conformance-runner.ts).
describe('ChromiumEngine applies every capture option', () => {
  const setup = engineWithFixtures({ extraArgs: [`--host-resolver-rules=${HOST_RESOLVER_RULES}`] });
  const hooks: ConformanceHooks = { hostsMapped: true };

  for (const testCase of optionCases) {
    const skip = testCase.requires !== undefined && !hooks[testCase.requires];
    it.skipIf(skip)(testCase.name, () => testCase.run(setup.engine, setup.fixture.url, hooks), 60_000);
  }
});
