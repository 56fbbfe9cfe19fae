#!/usr/bin/env node
// Fetches the real-page corpus (scripts/corpus.json): Debian documentation packages are
// downloaded with `apt-get download` and unpacked with dpkg-deb, never installed (installing
// some of them removes Node.js), into a cache outside the repository:
// $SCREENSHOT_CORPUS_DIR, by default ~/.cache/screenshot-appliance/corpus.
//   debs/  the downloaded packages (kept: a second run downloads nothing)
//   root/  the packages unpacked as if installed (root/usr/share/doc/...), served by the tests
// The packages' symlinks point into other packages (/usr/share/javascript/jquery/jquery.js or
// ../../../../javascript/...): unpacked side by side the relative ones resolve inside root/, and
// the absolute ones are rewritten to relative ones. The run ends by checking every page is there.
// `node scripts/corpus.mjs [--print-dir]`.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const list = JSON.parse(fs.readFileSync(path.join(here, 'corpus.json'), 'utf8'));
const cacheDir = process.env.SCREENSHOT_CORPUS_DIR || path.join(os.homedir(), '.cache', 'screenshot-appliance', 'corpus');

if (process.argv.includes('--print-dir')) {
  console.log(cacheDir);
  process.exit(0);
}

const debsDir = path.join(cacheDir, 'debs');
const rootDir = path.join(cacheDir, 'root');
const stampFile = path.join(rootDir, '.corpus-stamp');
// What root/ was unpacked from: a change of packages or pages unpacks it again.
const stamp = createHash('sha256').update(JSON.stringify({ packages: list.packages, pages: list.pages })).digest('hex');

function fail(message) {
  console.error(`corpus: ${message}`);
  process.exit(1);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.error) return { ok: false, output: String(result.error.message) };
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}

function debFor(name) {
  // apt-get download names the file <name>_<version>_<arch>.deb (the epoch's colon as %3a).
  const found = fs.readdirSync(debsDir).filter((f) => f.startsWith(`${name}_`) && f.endsWith('.deb'));
  return found.length > 0 ? path.join(debsDir, found.sort().at(-1)) : undefined;
}

function download(names) {
  // As root, apt downloads as its sandbox user, who cannot write to root's home: stay root.
  const args = ['download', ...(process.getuid?.() === 0 ? ['-o', 'APT::Sandbox::User=root'] : []), ...names];
  return run('apt-get', args, { cwd: debsDir });
}

function aptUpdate() {
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  console.log('corpus: apt-get update (the package lists were missing or stale)...');
  const result = sudo.length ? run('sudo', ['apt-get', 'update', '-qq']) : run('apt-get', ['update', '-qq']);
  if (!result.ok) fail(`apt-get update failed:\n${result.output}`);
}

function fetchDebs() {
  fs.mkdirSync(debsDir, { recursive: true });
  const missing = list.packages.map((p) => p.name).filter((name) => !debFor(name));
  if (missing.length === 0) return;
  console.log(`corpus: downloading ${missing.length} packages (${missing.join(' ')}) into ${debsDir}...`);
  let result = download(missing);
  if (!result.ok) {
    aptUpdate();
    result = download(missing.filter((name) => !debFor(name)));
  }
  const still = missing.filter((name) => !debFor(name));
  if (!result.ok || still.length > 0) {
    fail(
      `apt-get download failed for ${still.join(' ') || 'some packages'}. The corpus needs Debian 12's ` +
        `package lists (apt-get update) and its mirror reachable.\n${result.output.trim()}`,
    );
  }
}

/** Every symlink under `dir`, depth first. */
function* symlinks(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) yield full;
    else if (entry.isDirectory()) yield* symlinks(full);
  }
}

function unpack() {
  const staging = `${rootDir}.partial`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  for (const pkg of list.packages) {
    const deb = debFor(pkg.name);
    // dpkg-deb --fsys-tarfile | tar -x: the package's files as dpkg would lay them, no scripts run.
    const patterns = pkg.extract ?? [];
    const tar = patterns.length ? `tar -x -C "$1" --wildcards ${patterns.map((p) => `'${p}'`).join(' ')}` : 'tar -x -C "$1"';
    const result = run('bash', ['-o', 'pipefail', '-c', `dpkg-deb --fsys-tarfile "$0" | ${tar}`, deb, staging]);
    if (!result.ok) fail(`unpacking ${path.basename(deb)} failed:\n${result.output}`);
  }
  let rewritten = 0;
  for (const link of symlinks(staging)) {
    const target = fs.readlinkSync(link);
    if (!path.isAbsolute(target)) continue;
    const relative = path.relative(path.dirname(link), path.join(staging, target)) || '.';
    fs.unlinkSync(link);
    fs.symlinkSync(relative, link);
    rewritten++;
  }
  const absent = list.pages.filter((page) => !fs.existsSync(path.join(staging, page.path)));
  if (absent.length > 0) fail(`pages missing from the unpacked packages: ${absent.map((p) => p.path).join(', ')}`);
  fs.writeFileSync(path.join(staging, '.corpus-stamp'), stamp);
  fs.rmSync(rootDir, { recursive: true, force: true });
  fs.renameSync(staging, rootDir);
  console.log(`corpus: unpacked ${list.packages.length} packages into ${rootDir} (${rewritten} absolute symlinks made relative)`);
}

function bytesIn(dir) {
  const out = execFileSync('du', ['-sb', dir], { encoding: 'utf8' });
  return Number(out.split(/\s/)[0]);
}

const current = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, 'utf8') : '';
if (current === stamp) {
  console.log(`corpus: ${list.pages.length} pages from ${list.packages.length} packages, cached in ${cacheDir}`);
  process.exit(0);
}
fetchDebs();
unpack();
const mb = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;
console.log(`corpus: ${list.pages.length} pages ready; downloaded ${mb(bytesIn(debsDir))}, unpacked ${mb(bytesIn(rootDir))}`);
