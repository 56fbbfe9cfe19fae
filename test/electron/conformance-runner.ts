// The engine conformance suite against ElectronEngine, in an Electron main process:
//   npm run test:electron
// (builds with `npm run build:main`, then runs dist/test/electron/conformance-runner.js under
// Electron, inside xvfb-run where Linux has no display). Prints one line per case, then
// "N passed, N failed", and exits non-zero when a case failed. Cases that need an
// engine-specific hook this runner does not have are listed as skipped.
import { app } from 'electron';

import { ElectronEngine } from '../../main/electron-engine.js';
import { conformanceCases, type ConformanceHooks } from '../capture/conformance-cases.js';
import { optionCases } from '../capture/option-cases.js';
import { HOST_RESOLVER_RULES } from '../fixtures/blocking-pages.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';

/** A case that takes longer than this is failed, so one hang cannot stall the run. */
const CASE_TIMEOUT_MS = 120_000;

// The engine opens and closes a window per capture; the last one closing must not quit.
app.on('window-all-closed', () => undefined);

// Switches count only when given before `ready`. The blocking cases load ad and tracker hosts,
// which must reach the fixture server.
app.commandLine.appendSwitch('host-resolver-rules', HOST_RESOLVER_RULES);

// The browser of an ElectronEngine is this very process: nothing can crash it and go on, so
// there is no crashBrowser.
const hooks: ConformanceHooks = { hostsMapped: true };

async function runCase(run: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      run(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`did not finish within ${CASE_TIMEOUT_MS / 1000} s`)), CASE_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<number> {
  let passed = 0;
  let failed = 0;
  let fixture: FixtureServer | undefined;
  const engine = new ElectronEngine();
  try {
    fixture = await startFixtureServer();
    await engine.start();
    console.log(`ElectronEngine on Electron ${process.versions.electron}, Chromium ${engine.chromiumVersion()}`);
    for (const testCase of [...conformanceCases, ...optionCases]) {
      if (testCase.requires && !hooks[testCase.requires]) {
        console.log(`  - ${testCase.name} (skipped: needs the ${testCase.requires} hook)`);
        continue;
      }
      const started = Date.now();
      try {
        await runCase(() => testCase.run(engine, fixture!.url, hooks));
        passed++;
        console.log(`  ✓ ${testCase.name} (${Date.now() - started} ms)`);
      } catch (err) {
        failed++;
        console.log(`  ✗ ${testCase.name} (${Date.now() - started} ms)`);
        console.log(`      ${String((err as Error)?.stack ?? err).replace(/\n/g, '\n      ')}`);
      }
    }
  } catch (err) {
    failed++;
    console.log(`  ✗ setting up the run: ${String((err as Error)?.stack ?? err)}`);
  } finally {
    try {
      await engine.close();
    } catch (err) {
      console.log(`closing the engine failed: ${String(err)}`);
    }
    try {
      await fixture?.close();
    } catch (err) {
      console.log(`closing the fixture server failed: ${String(err)}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

// Not awaited at the top level: Electron emits `ready` only after the entry module finished.
app
  .whenReady()
  .then(main)
  .then(
    (code) => app.exit(code),
    (err: unknown) => {
      console.error(err);
      app.exit(1);
    },
  );
