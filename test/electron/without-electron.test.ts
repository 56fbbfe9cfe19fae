import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildMain } from '../../scripts/build-main.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const notFound = (id: string): string => {
  throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
};

describe('build:main', () => {
  it('skips the main process with a line saying how to add Electron when it is not installed', () => {
    const lines: string[] = [];
    let compiled = false;
    const code = buildMain({ resolve: notFound, compile: () => ((compiled = true), 0), log: (line) => lines.push(line) });
    expect(code).toBe(0);
    expect(compiled).toBe(false);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^build:main skipped/);
    expect(lines[0]).toContain('npm install electron');
  });

  it('compiles, and answers with the compiler, when Electron is installed', () => {
    const resolve = (id: string) => path.join(root, 'node_modules', id);
    expect(buildMain({ resolve, compile: () => 2, log: () => {} })).toBe(2);
  });

  it('does not take a broken electron package for a missing one', () => {
    const resolve = (): string => {
      throw Object.assign(new Error('Invalid package config'), { code: 'ERR_INVALID_PACKAGE_CONFIG' });
    };
    expect(() => buildMain({ resolve, compile: () => 0, log: () => {} })).toThrow('Invalid package config');
  });
});

/**
 * A clone whose `npm ci` ran without internet access: the tracked files, and a node_modules of
 * links to this one's packages but for electron, which npm leaves out when its download fails.
 */
function cloneWithoutElectron(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-no-electron-'));
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of tracked) {
    if (!fs.existsSync(path.join(root, file))) continue;
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.copyFileSync(path.join(root, file), path.join(dir, file));
  }
  const linkAllBut = (from: string, to: string) => {
    fs.mkdirSync(to);
    for (const name of fs.readdirSync(from)) {
      if (name !== 'electron' && name !== '.bin') fs.symlinkSync(path.join(from, name), path.join(to, name));
    }
  };
  linkAllBut(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  linkAllBut(path.join(root, 'node_modules', '.bin'), path.join(dir, 'node_modules', '.bin'));
  return dir;
}

describe('a clone installed without Electron', () => {
  let dir: string;

  beforeAll(() => {
    dir = cloneWithoutElectron();
  });

  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('builds the server and the panel with npm run build, saying the main process was skipped', () => {
    const res = spawnSync('npm', ['run', 'build', '--silent'], { cwd: dir, encoding: 'utf8' });
    expect(res.stdout + res.stderr).not.toContain('TS2307');
    expect(res.status, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain('build:main skipped');
    expect(fs.existsSync(path.join(dir, 'dist', 'server', 'cli.js'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'dist', 'renderer', 'index.html'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'dist', 'main'))).toBe(false);
  }, 180_000);

  it('answers npm start with how to install Electron, not a stack trace', () => {
    const res = spawnSync(process.execPath, ['scripts/electron-launch.mjs', '.'], { cwd: dir, encoding: 'utf8' });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('npm install electron');
    expect(res.stderr).not.toContain('MODULE_NOT_FOUND');
  });
});
