import { afterAll, beforeAll, describe, it } from 'vitest';

import { ChromiumEngine } from '../../server/capture/chromium-engine.js';
import { findChromium } from '../../server/capture/chromium-path.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { optionCases } from './option-cases.js';

// The capture options against the headless engine; the same cases run inside Electron
// (test/electron/conformance-runner.ts).
describe('ChromiumEngine applies every capture option', () => {
  let fixture: FixtureServer;
  let engine: ChromiumEngine;

  beforeAll(async () => {
    fixture = await startFixtureServer();
    engine = new ChromiumEngine({ executablePath: findChromium(process.env.CHROMIUM_PATH) });
    await engine.start();
  }, 60_000);

  afterAll(async () => {
    await engine?.close();
    await fixture?.close();
  });

  for (const testCase of optionCases) {
    it(testCase.name, () => testCase.run(engine, fixture.url), 60_000);
  }
});
