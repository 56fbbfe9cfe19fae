import { type ChildProcess, execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import pg from 'pg';

import { freePort } from './ports.js';

const run = promisify(execFile);

/** A PostgreSQL server of the tests' own, on a temporary data directory and a loopback port. */
export interface TestPostgres {
  /** The server's `postgres` database, as the superuser. */
  url: string;
  /** A new, empty database (a random name unless given); its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** Who runs initdb and postgres: both refuse root, so as root the package's `postgres` user. */
interface RunAs {
  uid?: number;
  gid?: number;
}

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
/** A free port is picked before postgres binds it; another process can take it in between. */
const START_TRIES = 3;

/**
 * Starts PostgreSQL from the distribution's binaries (/usr/lib/postgresql/<version>/bin, the
 * newest there; never whatever `pg_ctl` PATH finds first) on 127.0.0.1 and a free port, with a
 * throwaway superuser password and durability off (fsync, synchronous commit, full-page
 * writes): the data lives as long as the test file. The server is stopped by `stop()`, and
 * also when the test process ends any other way (a watchdog, below).
 */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = await serverBinaries();
  const runAs = await serverUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-pg-'));
  try {
    if (runAs.uid !== undefined) fs.chownSync(dir, runAs.uid, runAs.gid!);
    const password = crypto.randomBytes(18).toString('hex');
    const passwordFile = path.join(dir, 'password');
    fs.writeFileSync(passwordFile, password + '\n', { mode: 0o600 });
    if (runAs.uid !== undefined) fs.chownSync(passwordFile, runAs.uid, runAs.gid!);
    const data = path.join(dir, 'data');
    await run(
      path.join(bin, 'initdb'),
      ['-D', data, '-U', 'postgres', `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
      { ...runAs, cwd: dir, env: serverEnv(), timeout: 60_000 },
    );
    fs.rmSync(passwordFile);

    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const child = spawn(
        path.join(bin, 'postgres'),
        [
          '-D', data, '-p', String(port),
          '-c', 'listen_addresses=127.0.0.1',
          '-c', `unix_socket_directories=${dir}`,
          '-c', 'fsync=off',
          '-c', 'synchronous_commit=off',
          '-c', 'full_page_writes=off',
        ],
        { ...runAs, cwd: dir, env: serverEnv(), stdio: ['ignore', 'ignore', 'pipe'] },
      );
      const guard = watchdog(child, dir);
      let log = '';
      child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-8_000)));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
      try {
        await untilAccepting(url, exited);
      } catch (err) {
        await halt(child, exited);
        guard.release();
        if (attempt < START_TRIES && /could not bind|already in use/i.test(log)) continue;
        throw new Error(`PostgreSQL did not start: ${(err as Error).message}\n${log}`);
      }
      return {
        url,
        createDatabase: (name) => createDatabase(url, name),
        stop: async () => {
          await halt(child, exited);
          guard.release();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    }
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

async function createDatabase(serverUrl: string, name = `t_${crypto.randomBytes(6).toString('hex')}`): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    // From template0, which nothing can have changed, so every database starts the same.
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE template0`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The bin directory of the newest PostgreSQL the distribution installed. */
async function serverBinaries(): Promise<string> {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'postgres')) && fs.existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error(`no PostgreSQL server under ${root}/<version>/bin (scripts/setup.sh installs the postgresql package)`);
  return path.join(root, versions[0], 'bin');
}

/** As root, the `postgres` system user (made when missing); otherwise the current user. */
async function serverUser(): Promise<RunAs> {
  if (process.getuid?.() !== 0) return {};
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout),
  });
  try {
    return await ids();
  } catch {
    await run('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    return ids();
  }
}

/** Messages in English whatever the machine's locale, so a failure reads the same everywhere. */
const serverEnv = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', LANG: 'C' });

async function untilAccepting(url: string, exited: Promise<void>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (gone) throw new Error('the server exited');
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`not accepting connections after ${READY_TIMEOUT_MS} ms (${(err as Error).message})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Fast shutdown (SIGINT: sessions ended, no checkpoint wait worth having), immediate if that hangs. */
async function halt(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/**
 * A detached process holding a pipe from this one. vitest may end a worker without running
 * any hook (a time-out, a kill): the pipe then closes, and the watchdog stops the server and
 * removes its directory. After a normal stop the test process releases it and it just exits.
 */
function watchdog(server: ChildProcess, dir: string): { release(): void } {
  const script = `
    const fs = require('node:fs');
    const [pid, dir] = process.argv.slice(1);
    let released = false;
    process.stdin.on('data', () => (released = true));
    process.stdin.on('error', () => undefined);
    process.stdin.on('close', () => {
      if (released) process.exit(0);
      const alive = () => { try { process.kill(Number(pid), 0); return true; } catch { return false; } };
      try { process.kill(Number(pid), 'SIGINT'); } catch {}
      const started = Date.now();
      const timer = setInterval(() => {
        if (alive() && Date.now() - started < ${STOP_TIMEOUT_MS}) return;
        if (alive()) { try { process.kill(Number(pid), 'SIGQUIT'); } catch {} }
        clearInterval(timer);
        fs.rmSync(dir, { recursive: true, force: true });
        process.exit(0);
      }, 100);
    });
  `;
  const guard = spawn(process.execPath, ['-e', script, String(server.pid), dir], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  guard.unref();
  return {
    release() {
      guard.stdin!.end('released');
    },
  };
}
