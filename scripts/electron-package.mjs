// Where the `electron` npm package is, for the scripts that build or start the desktop app.
// Electron is an optional dependency: its install step downloads the binary, and where that
// fails (no internet access) npm leaves the package out instead of failing `npm ci`.
import { createRequire } from 'node:module';
import path from 'node:path';

/** What to do when the install left Electron out. */
export const ELECTRON_MISSING =
  'Electron is not installed: it is an optional dependency, left out when its download fails (no internet access). ' +
  'Run `npm install electron` where the internet (or ELECTRON_MIRROR) is reachable. ' +
  'The headless server (npm run serve) works without it.';

/**
 * The directory of the installed `electron` package, or null when there is none.
 * @param {(id: string) => string} [resolve] how modules are found; defaults to this repository's node_modules
 * @returns {string | null}
 */
export function electronPackageDir(resolve = createRequire(import.meta.url).resolve) {
  try {
    return path.dirname(resolve('electron/package.json'));
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'MODULE_NOT_FOUND') return null;
    throw err;
  }
}
