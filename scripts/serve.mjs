// `npm run serve`: starts the headless server from the build, building first only when a source
// is newer than the build. `npm run build` takes ~20 s on a quiet two-core machine and 150 s on a
// loaded one, so rebuilding at every start made a restart that slow; the check below reads the
// times of ~300 files, 30 ms. A fresh clone has no build, so its first start builds.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * What the server's build is made from: its sources, the panel's (which also reads
 * server/contract) and the files that change how they compile. main/ is left out: the headless
 * server never loads the Electron shell, and `npm start` builds it every time.
 */
export const SERVE_SOURCES = ['server', 'renderer', 'tsconfig.json', 'package-lock.json'];

/** The files `npm run build` writes for the server, each rewritten by every build. */
export const SERVE_OUTPUTS = ['dist/server/cli.js', 'dist/renderer/index.html'];

/** The newest modification time under `entry` (a file or a directory), skipping node_modules; 0 when absent. */
export function newestMtime(entry) {
  let stat;
  try {
    stat = fs.statSync(entry);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const dirent of fs.readdirSync(entry, { withFileTypes: true })) {
    if (dirent.name === 'node_modules') continue;
    newest = Math.max(newest, newestMtime(path.join(entry, dirent.name)));
  }
  return newest;
}

/**
 * Why the build must be made again before serving, or null when it is up to date: an output
 * missing, or a source (a file, or a directory whose entries were added, removed or renamed)
 * newer than the oldest output.
 * @param {{ root: string, sources?: string[], outputs?: string[] }} options
 * @returns {string | null}
 */
export function staleBuildReason({ root: dir, sources = SERVE_SOURCES, outputs = SERVE_OUTPUTS }) {
  let oldest = Infinity;
  for (const output of outputs) {
    const built = newestMtimeOfFile(path.join(dir, output));
    if (built === 0) return `${output} is missing`;
    oldest = Math.min(oldest, built);
  }
  for (const source of sources) {
    if (newestMtime(path.join(dir, source)) > oldest) return `${source} changed since the last build`;
  }
  return null;
}

function newestMtimeOfFile(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const reason = staleBuildReason({ root });
  if (reason) {
    console.error(`Building first: ${reason}.`);
    const npm = process.env.npm_execpath;
    const build = npm
      ? spawnSync(process.execPath, [npm, 'run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
      : spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
  // The CLI reads its arguments from process.argv when imported: it runs in this process, so
  // signals and the exit code are the server's own.
  const cli = path.join(root, 'dist', 'server', 'cli.js');
  process.argv = [process.argv[0], cli, 'serve', ...process.argv.slice(2)];
  await import(pathToFileURL(cli).href);
}
