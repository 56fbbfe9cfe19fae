// `npm run build:main`: compiles the Electron side (main/ and test/electron/, main/tsconfig.json).
// Without the electron package (an install without internet access leaves it out) there are no
// Electron types to compile against, so the step says so and succeeds: `npm run build`,
// `npm run serve` and `npm test` then build and run the headless server alone.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ELECTRON_MISSING, electronPackageDir } from './electron-package.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * tsc's flags that keep what it built in dist/, so that a build over an unchanged tree (`npm test`
 * right after the set-up's build) takes about 4 s instead of 11. Removing dist/ removes it.
 * @param {string} name
 */
const INCREMENTAL = (name) => ['--incremental', '--tsBuildInfoFile', path.join(root, 'dist', '.tsbuildinfo', name)];

/**
 * Compiles main/ when Electron is installed; otherwise logs why it does not.
 * @param {{ resolve?: (id: string) => string, compile: () => number, log: (line: string) => void }} options
 * @returns {number} the exit code
 */
export function buildMain({ resolve, compile, log }) {
  if (electronPackageDir(resolve) === null) {
    log(`build:main skipped (the desktop app's main process is not built). ${ELECTRON_MISSING}`);
    return 0;
  }
  return compile();
}

function compileWithTsc() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'main', 'tsconfig.json'), ...INCREMENTAL('main')], { stdio: 'inherit' });
  return result.status ?? 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = buildMain({ compile: compileWithTsc, log: (line) => console.log(line) });
}
