import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { freePort } from './ports.js';
import { tempDir } from './temp-dir.js';

/**
 * Real web apps from Debian's packages (scripts/setup.sh installs them), each started by the test
 * itself as its own child process: on a free 127.0.0.1 port, with its configuration and data in a
 * temporary directory, never the instance a package's post-install script may have started.
 */
export const APP_NAMES = ['prometheus', 'netdata', 'transmission', 'dokuwiki', 'glances'] as const;
export type AppName = (typeof APP_NAMES)[number];

export interface StartedApp {
  /** The app's root address, e.g. "http://127.0.0.1:41234" (no trailing slash). */
  url: string;
  /** Its temporary directory: configuration, data, and each process's output (`<command>.log`). */
  dir: string;
  /** Stops the app's processes and removes its directory; also when they are gone already. */
  stop(): Promise<void>;
}

const PROMETHEUS = '/usr/bin/prometheus';
const NETDATA = '/usr/sbin/netdata';
const NETDATA_WEB = '/usr/share/netdata/web';
const TRANSMISSION = '/usr/bin/transmission-daemon';
const TRANSMISSION_CREATE = '/usr/bin/transmission-create';
const PHP = '/usr/bin/php';
const DOKUWIKI = '/usr/share/dokuwiki';
const DOKUWIKI_CONF = '/etc/dokuwiki';
/** The wiki's pages as the package installed them. */
const DOKUWIKI_DATA = '/var/lib/dokuwiki/data';
const GLANCES = '/usr/bin/glances';
const GLANCES_WEB = '/usr/lib/python3/dist-packages/glances/outputs/static/public/index.html';

/** Why `name` cannot be started on this machine, or null when it can. */
export function appMissing(name: AppName): string | null {
  const need = (files: string[], packages: string) => {
    const absent = files.filter((f) => !fs.existsSync(f));
    return absent.length ? `${absent.join(', ')} missing: install ${packages} (scripts/setup.sh does)` : null;
  };
  switch (name) {
    case 'prometheus':
      return need([PROMETHEUS], 'prometheus');
    case 'netdata':
      return need([NETDATA, NETDATA_WEB], 'netdata');
    case 'transmission':
      return need([TRANSMISSION, TRANSMISSION_CREATE], 'transmission-daemon transmission-cli');
    case 'dokuwiki':
      return need([PHP, DOKUWIKI], 'dokuwiki php-cli') ?? (readable(DOKUWIKI_DATA) ? null : `${DOKUWIKI_DATA} is readable by www-data only: run as root, or let this user read it`);
    case 'glances':
      // Debian 12's glances ships the web UI's Vue sources without their built bundle, so
      // `glances -w` has no page to serve.
      if (!fs.existsSync(GLANCES)) return need([GLANCES], 'glances');
      return fs.existsSync(GLANCES_WEB) ? null : `its package has no built web UI (${GLANCES_WEB}): Debian 12's has none`;
  }
}

/** Starts `name` and resolves once it answers with live data (see each starter). */
export async function startApp(name: AppName): Promise<StartedApp> {
  const reason = appMissing(name);
  if (reason) throw new Error(`${name} cannot start: ${reason}`);
  const dir = await tempDir(`sa-app-${name}-`);
  const processes: ChildProcess[] = [];
  // A test process that ends without stop() (a worker torn down, a time-out) takes the app along.
  const killOnExit = () => processes.forEach((child) => signalGroup(child, 'SIGKILL'));
  process.once('exit', killOnExit);
  const stop = async () => {
    await Promise.all(processes.map(stopProcess));
    process.removeListener('exit', killOnExit);
    await fs.promises.rm(dir, { recursive: true, force: true });
  };
  const run = (command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) => {
    const log = fs.openSync(path.join(dir, `${path.basename(command)}.log`), 'a');
    // Its own process group, so that stop() reaches the helpers it starts (netdata's plugins).
    const child = spawn(command, args, { cwd: options.cwd ?? dir, env: { ...process.env, ...options.env }, detached: true, stdio: ['ignore', log, log] });
    fs.closeSync(log);
    processes.push(child);
    return child;
  };
  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    await STARTERS[name]({ dir, port, url, run });
    return { url, dir, stop };
  } catch (error) {
    const logs = fs.existsSync(dir) ? logsOf(dir) : '';
    await stop();
    throw new Error(`${name} did not start: ${(error as Error).message}${logs}`);
  }
}

interface StartContext {
  dir: string;
  port: number;
  url: string;
  run: (command: string, args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv }) => ChildProcess;
}

const STARTERS: Record<AppName, (app: StartContext) => Promise<void>> = {
  /** Scraping itself every second; ready once a minute's query has points to draw. */
  async prometheus({ dir, port, url, run }) {
    fs.writeFileSync(
      path.join(dir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: prometheus\n    static_configs:\n      - targets: ['127.0.0.1:${port}']\n`,
    );
    run(PROMETHEUS, ['--config.file=prometheus.yml', '--storage.tsdb.path=data', `--web.listen-address=127.0.0.1:${port}`]);
    await until('prometheus has five scrapes', async () => {
      const end = Date.now() / 1000;
      const answer = await getJson(`${url}/api/v1/query_range?query=up&start=${end - 60}&end=${end}&step=1`);
      const values = (answer as { data?: { result?: Array<{ values: unknown[] }> } })?.data?.result?.[0]?.values ?? [];
      return values.length >= 5;
    });
  },

  /**
   * Its dashboard over its own collectors (the kernel's /proc), data kept in memory; no external
   * plugin, no statsd listener, no cloud. Ready once ten seconds of CPU data are there.
   */
  async netdata({ dir, port, url, run }) {
    for (const sub of ['cache', 'lib', 'log', 'run']) fs.mkdirSync(path.join(dir, sub));
    fs.writeFileSync(
      path.join(dir, 'netdata.conf'),
      [
        '[global]',
        '\trun as user = ' + currentUser(),
        '[db]',
        '\tmode = ram',
        '\tretention = 600',
        '\tupdate every = 1',
        '[directories]',
        ...['cache', 'lib', 'log', 'run'].map((sub) => `\t${sub} = ${path.join(dir, sub)}`),
        `\tweb = ${NETDATA_WEB}`,
        '[web]',
        `\tbind to = 127.0.0.1:${port}`,
        '[logs]',
        `\terror log = ${path.join(dir, 'log', 'error.log')}`,
        `\tdebug log = ${path.join(dir, 'log', 'debug.log')}`,
        '\taccess log = none',
        '[plugins]',
        '\tenable running new plugins = no',
        '[statsd]',
        '\tenabled = no',
        '[ml]',
        '\tenabled = no',
        '[cloud]',
        '\tenabled = no',
        '[registry]',
        '\tenabled = no',
        '',
      ].join('\n'),
    );
    run(NETDATA, ['-D', '-c', path.join(dir, 'netdata.conf'), '-u', currentUser()]);
    await until('netdata has ten seconds of data', async () => {
      const answer = await getJson(`${url}/api/v1/data?chart=system.cpu&after=-10&format=json`);
      return ((answer as { data?: unknown[] })?.data?.length ?? 0) >= 10;
    });
  },

  /** One 3 MB transfer seeding (made here, its data present); no DHT, LPD, uTP nor port mapping. */
  async transmission({ dir, port, url, run }) {
    const data = path.join(dir, 'downloads');
    fs.mkdirSync(data);
    fs.writeFileSync(path.join(data, 'debian-archive-sample.bin'), Buffer.alloc(3_000_000, 'screenshot-appliance '));
    execFileSync(TRANSMISSION_CREATE, ['-o', path.join(dir, 'sample.torrent'), path.join(data, 'debian-archive-sample.bin')], { stdio: 'ignore', timeout: 30_000 });
    const peerPort = await freePort();
    run(TRANSMISSION, ['-f', '-g', path.join(dir, 'config'), '-T', '-a', '127.0.0.1', '-r', '127.0.0.1', '-p', String(port), '-P', String(peerPort), '-O', '-Y', '-M', '--no-utp', '-w', data]);
    const metainfo = fs.readFileSync(path.join(dir, 'sample.torrent')).toString('base64');
    await until('transmission answers its RPC', async () => (await transmissionRpc(url, 'torrent-add', { metainfo, 'download-dir': data })) !== null);
    await until('transmission seeds the transfer', async () => {
      const answer = (await transmissionRpc(url, 'torrent-get', { fields: ['status', 'percentDone'] })) as { torrents?: Array<{ status: number; percentDone: number }> } | null;
      return answer?.torrents?.[0]?.percentDone === 1 && answer.torrents[0].status === 6;
    });
  },

  /**
   * A copy of the installed wiki (its configuration and data writable, in `dir`) served by PHP's
   * own server; the configuration is found through inc/preload.php, as Debian's package does.
   */
  async dokuwiki({ dir, port, url, run }) {
    const site = path.join(dir, 'site');
    fs.cpSync(DOKUWIKI, site, { recursive: true, dereference: true });
    // The access lists link to files www-data alone reads: the package's defaults stand for them.
    const conf = path.join(dir, 'conf');
    const lists = ['acl.auth.php', 'users.auth.php'];
    fs.cpSync(DOKUWIKI_CONF, conf, { recursive: true, dereference: true, filter: (from) => !lists.includes(path.basename(from)) });
    for (const list of lists) fs.copyFileSync(path.join(DOKUWIKI_CONF, `${list}.dist`), path.join(conf, list));
    fs.cpSync(DOKUWIKI_DATA, path.join(dir, 'data'), { recursive: true, dereference: true });
    fs.writeFileSync(path.join(site, 'inc', 'preload.php'), `<?php\ndefine('DOKU_CONF', ${JSON.stringify(conf + '/')});\n`);
    fs.appendFileSync(path.join(conf, 'local.php'), `\n$conf['savedir'] = ${JSON.stringify(path.join(dir, 'data'))};\n`);
    run(PHP, ['-S', `127.0.0.1:${port}`], { cwd: site, env: { PHP_CLI_SERVER_WORKERS: '4' } });
    await until('dokuwiki answers', async () => (await fetch(`${url}/doku.php?id=wiki:syntax`, { signal: AbortSignal.timeout(5_000) })).ok);
    await warmWikiPage(url, path.join(dir, 'data'), 'wiki:syntax');
  },

  async glances({ port, url, run }) {
    run(GLANCES, ['-w', '-B', '127.0.0.1', '-p', String(port), '--disable-autodiscover']);
    await until('glances answers', async () => (await fetch(`${url}/api/3/cpu`, { signal: AbortSignal.timeout(5_000) })).ok);
  },
};

/**
 * Brings a wiki page's caches up to date, so that the cases' views read them and none renders it.
 * A view runs the page's indexer (the taskrunner the page links to, which answers before it
 * works), and the view after the indexer's first run renders the page again; the wiki writes its
 * page cache in place, and a view reading it meanwhile, as the reference and the service do
 * together, was served the page without its body (13,975 bytes of 77,017, once in 60 views of
 * four at a time). Views, each with its taskrunner, go on until the page is indexed and a view
 * writes nothing to the cache.
 */
async function warmWikiPage(url: string, data: string, id: string): Promise<void> {
  const indexed = `${path.join(data, 'meta', ...id.split(':'))}.indexed`;
  for (let round = 0; round < 6; round++) {
    const wasIndexed = fs.existsSync(indexed);
    const before = wikiCacheWrittenAt(data);
    await viewWikiPage(url, id);
    await until(`the wiki has indexed ${id}`, async () => fs.existsSync(indexed), 10_000);
    if (wasIndexed && wikiCacheWrittenAt(data) === before) return;
  }
  throw new Error(`the wiki still renders ${id} anew at each view`);
}

/** A view of a wiki page as a browser makes it: the page, then the taskrunner it links to. */
export async function viewWikiPage(url: string, id: string): Promise<void> {
  const html = await (await fetch(`${url}/doku.php?id=${encodeURIComponent(id)}`, { signal: AbortSignal.timeout(10_000) })).text();
  const runner = /lib\/exe\/taskrunner\.php\?[^"]+/.exec(html)?.[0].replaceAll('&amp;', '&');
  if (runner) await (await fetch(`${url}/${runner}`, { signal: AbortSignal.timeout(10_000) })).arrayBuffer();
}

/** When the wiki whose data directory is `data` last wrote a file of its cache (ms since the epoch). */
export function wikiCacheWrittenAt(data: string): number {
  const files = fs.readdirSync(path.join(data, 'cache'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return Math.max(0, ...files.map((entry) => fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs));
}

function readable(dir: string): boolean {
  try {
    fs.readdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

function currentUser(): string {
  return execFileSync('id', ['-un'], { encoding: 'utf8' }).trim();
}


/** Polls `check` (its errors count as "not yet") every 250 ms, up to `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(250);
  }
}

async function getJson(url: string): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return response.ok ? response.json() : null;
}

/** One call of Transmission's RPC (with its session-id handshake); its `arguments`, or null. */
async function transmissionRpc(url: string, method: string, args: object): Promise<unknown> {
  const call = (session = '') =>
    fetch(`${url}/transmission/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-transmission-session-id': session },
      body: JSON.stringify({ method, arguments: args }),
      signal: AbortSignal.timeout(5_000),
    });
  let response = await call();
  if (response.status === 409) response = await call(response.headers.get('x-transmission-session-id') ?? '');
  if (!response.ok) return null;
  const body = (await response.json()) as { result: string; arguments: unknown };
  return body.result === 'success' ? body.arguments : null;
}

/** SIGTERM to the child's process group, SIGKILL after 5 s; resolves once the child is gone. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signalGroup(child, 'SIGTERM');
  const killed = sleep(5_000).then(() => signalGroup(child, 'SIGKILL'));
  await Promise.race([exited, killed.then(() => exited)]);
}

/** Sends `signal` to the process group the child leads (it and the helpers it started). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Gone already.
  }
}

/** The tail of every log the app wrote, for a start that failed. */
function logsOf(dir: string): string {
  const logs = fs.readdirSync(dir).filter((f) => f.endsWith('.log'));
  return logs.map((f) => `\n--- ${f}\n${fs.readFileSync(path.join(dir, f), 'utf8').slice(-2_000)}`).join('');
}
