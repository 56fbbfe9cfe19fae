import { PRESETS } from '../server/capture/presets.js';
import { APP_CASES } from '../test/apps/app-cases.js';
import { appMissing, type AppName, startApp, type StartedApp } from '../test/helpers/apps.js';
import type { Scenario } from './scenarios.js';

/** The pages of one running app: their paths are on `base`. */
export interface AppMix {
  mix: string;
  base: string;
  pages: Scenario[];
}

export interface AppsMix {
  /** One mix per app started, named `app: <name>`. */
  mixes: AppMix[];
  /** The apps left out, with the reason (a package not installed). */
  skipped: string[];
  stop(): Promise<void>;
}

/**
 * The apps mix: the desktop pages of the apps corpus (test/apps/app-cases.ts), each app started for
 * the run as the test starts it (test/helpers/apps.ts: its own process on a 127.0.0.1 port, a
 * temporary directory), the sign-in form left out. An app whose package is missing is skipped and
 * named in `skipped`. `stop()` stops them all.
 */
export async function startAppsMix(): Promise<AppsMix> {
  const cases = APP_CASES.filter((c) => !c.warns && c.presets.includes('desktop'));
  const apps = [...new Set(cases.map((c) => c.app))];
  const skipped = apps.flatMap((app) => {
    const reason = appMissing(app);
    return reason ? [`${app}: ${reason}`] : [];
  });
  const started = new Map<AppName, StartedApp>();
  const stop = async () => {
    await Promise.allSettled([...started.values()].map((app) => app.stop()));
  };
  // Side by side: netdata alone needs ten seconds of data before its dashboard can draw.
  const starts = await Promise.allSettled(
    apps.filter((a) => appMissing(a) === null).map(async (app) => started.set(app, await startApp(app))),
  );
  const failed = starts.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const mixes = [...started].map(([app, running]) => ({
    mix: `app: ${app}`,
    base: running.url,
    pages: cases.filter((c) => c.app === app).map((c) => ({ name: c.id, path: c.view.path, preset: PRESETS.desktop, fullPage: false })),
  }));
  return { mixes, skipped, stop };
}
