import fs from 'node:fs';
import path from 'node:path';

/** No usable Chromium: the message says where we looked and how to install one. */
export class ChromiumNotFoundError extends Error {
  override readonly name = 'ChromiumNotFoundError';
}

/** How to look for Chromium; everything is passed in so only config.ts reads the environment. */
export interface ChromiumLookup {
  /** @default process.platform */
  platform?: NodeJS.Platform;
  /** Environment used for PATH and the Windows program folders. @default {} */
  env?: Record<string, string | undefined>;
  /** Whether `file` is an executable file. @default a check with fs.accessSync(X_OK) */
  isExecutable?: (file: string) => boolean;
}

// Debian's real binary comes first: /usr/bin/chromium is a shell wrapper that starts ~20 ms slower.
const LINUX_PATHS = [
  '/usr/lib/chromium/chromium',
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/snap/bin/chromium',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
];
const LINUX_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
const MAC_PATHS = [
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];

const INSTALL_HINT =
  'Install Chromium (Debian/Ubuntu: `apt-get install -y chromium`; macOS: `brew install --cask chromium`; ' +
  'Windows: install Google Chrome) or pass its path with --chromium PATH or CHROMIUM_PATH.';

/** The places findChromium() tries, in order, for a platform. */
export function chromiumCandidates(platform: NodeJS.Platform, env: Record<string, string | undefined> = {}): string[] {
  if (platform === 'darwin') return [...MAC_PATHS];
  if (platform === 'win32') {
    const roots = [env.LOCALAPPDATA, env.PROGRAMFILES, env['PROGRAMFILES(X86)']].filter((r): r is string => !!r);
    return roots.flatMap((root) => [
      path.win32.join(root, 'Chromium', 'Application', 'chrome.exe'),
      path.win32.join(root, 'Google', 'Chrome', 'Application', 'chrome.exe'),
    ]);
  }
  const onPath = (env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .flatMap((dir) => LINUX_NAMES.map((name) => path.join(dir, name)));
  return [...new Set([...LINUX_PATHS, ...onPath])];
}

function defaultIsExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The Chromium executable to drive: `explicit` (from --chromium or CHROMIUM_PATH, passed by the
 * caller) when given, otherwise the first one found in the usual places.
 * @throws ChromiumNotFoundError naming the install command when there is none.
 */
export function findChromium(explicit?: string, lookup: ChromiumLookup = {}): string {
  const isExecutable = lookup.isExecutable ?? defaultIsExecutable;
  if (explicit) {
    if (isExecutable(explicit)) return explicit;
    throw new ChromiumNotFoundError(`Chromium was not found at ${explicit} (set by --chromium or CHROMIUM_PATH). ${INSTALL_HINT}`);
  }
  const candidates = chromiumCandidates(lookup.platform ?? process.platform, lookup.env ?? {});
  const found = candidates.find((file) => isExecutable(file));
  if (found) return found;
  throw new ChromiumNotFoundError(`Chromium was not found (looked in ${candidates.join(', ')}). ${INSTALL_HINT}`);
}
