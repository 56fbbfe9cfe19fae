import { afterAll, beforeAll } from 'vitest';

import { ChromiumEngine, type ChromiumEngineOptions } from '../../server/capture/chromium/chromium-engine.js';
import { findChromium } from '../../server/capture/chromium/chromium-path.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';

/** What engineWithFixtures() sets up; its fields are there once the file's tests run. */
export interface EngineWithFixtures {
  engine: ChromiumEngine;
  fixture: FixtureServer;
}

/**
 * One ChromiumEngine on the system Chromium (CHROMIUM_PATH, as the service finds it) and the
 * fixture server, shared by the tests of a file or a describe block: started before them,
 * closed after. `options` add to the engine's (its extra switches, say).
 */
export function engineWithFixtures(options: Partial<ChromiumEngineOptions> = {}): EngineWithFixtures {
  const setup = {} as EngineWithFixtures;
  beforeAll(async () => {
    setup.fixture = await startFixtureServer();
    setup.engine = new ChromiumEngine({ executablePath: findChromium(process.env.CHROMIUM_PATH), ...options });
    await setup.engine.start();
  }, 60_000);
  afterAll(async () => {
    await setup.engine?.close();
    await setup.fixture?.close();
  });
  return setup;
}
