// Runs Electron on the built app (`npm start`) or on a main-process script (`npm run test:electron`).
// - An install may have skipped Electron's binary download (ELECTRON_SKIP_BINARY_DOWNLOAD, as
//   scripts/setup.sh does), so the first run fetches it (node_modules/electron/install.js; it
//   needs internet access or ELECTRON_MIRROR). An install without internet access leaves the
//   optional electron package out altogether: then this says how to add it.
// - Electron refuses to run as root on Linux without --no-sandbox (containers, CI).
// - On Linux without a display it runs under `xvfb-run -a`.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ELECTRON_MISSING, electronPackageDir } from './electron-package.mjs';

/** A virtual screen larger than the biggest preset window (desktop, 1920×1080). */
export const XVFB_SCREEN = '-screen 0 2560x1600x24';

/**
 * The command that starts Electron with `args` on this machine.
 * @param {{ electron: string, args: string[], platform: string, env: Record<string, string | undefined>, uid?: number }} options
 * @returns {{ command: string, args: string[] }}
 */
export function electronCommand({ electron, args, platform, env, uid }) {
  const argv = platform === 'linux' && uid === 0 ? [...args, '--no-sandbox'] : [...args];
  if (platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY) {
    return { command: 'xvfb-run', args: ['-a', '-s', XVFB_SCREEN, electron, ...argv] };
  }
  return { command: electron, args: argv };
}

/** The Electron executable, downloading it first when it is missing. */
function electronBinary() {
  const dir = electronPackageDir();
  if (dir === null) {
    console.error(ELECTRON_MISSING);
    process.exit(1);
  }
  const installed = () => {
    try {
      const relative = fs.readFileSync(path.join(dir, 'path.txt'), 'utf8');
      const base = process.env.ELECTRON_OVERRIDE_DIST_PATH || path.join(dir, 'dist');
      const binary = path.join(base, relative);
      return fs.existsSync(binary) ? binary : null;
    } catch {
      return null;
    }
  };
  let binary = installed();
  if (binary) return binary;
  console.log('The Electron binary is not installed yet; fetching it once (node node_modules/electron/install.js)...');
  const env = { ...process.env };
  delete env.ELECTRON_SKIP_BINARY_DOWNLOAD;
  const result = spawnSync(process.execPath, [path.join(dir, 'install.js')], { stdio: 'inherit', env });
  binary = installed();
  if (result.status !== 0 || !binary) {
    console.error(
      'Could not fetch Electron: it needs internet access (or ELECTRON_MIRROR pointing at a mirror). ' +
        'The headless server (npm run serve) works without it.',
    );
    process.exit(1);
  }
  return binary;
}

function main() {
  const target = electronCommand({
    electron: electronBinary(),
    args: process.argv.slice(2),
    platform: process.platform,
    env: process.env,
    uid: process.getuid?.(),
  });
  const env = { ...process.env };
  // Set, it would make Electron behave as plain Node.
  delete env.ELECTRON_RUN_AS_NODE;
  const child = spawn(target.command, target.args, { stdio: 'inherit', env });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    console.error(
      err.code === 'ENOENT' && target.command === 'xvfb-run'
        ? 'There is no display and xvfb-run is not installed: install xvfb (apt-get install xvfb) or set DISPLAY.'
        : `Could not start Electron: ${err.message}`,
    );
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
