import { describe, it } from 'vitest';

import { engineWithFixtures } from '../helpers/capture-engine.js';
import { optionCases } from './option-cases.js';

// The capture options against the headless engine; the same cases run inside Electron
// (test/electron/conformance-runner.ts).
describe('ChromiumEngine applies every capture option', () => {
  const setup = engineWithFixtures();

  for (const testCase of optionCases) {
    it(testCase.name, () => testCase.run(setup.engine, setup.fixture.url), 60_000);
  }
});
