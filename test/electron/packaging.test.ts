import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { load } from 'js-yaml';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

import { electronCommand, XVFB_SCREEN } from '../../scripts/electron-launch.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface BuilderConfig {
  appId?: string;
  productName?: string;
  directories?: { output?: string };
  files?: string[];
  asarUnpack?: string[];
  linux?: { target?: string[]; maintainer?: string };
  win?: { target?: string[] };
  mac?: { target?: string[] };
}

const builderConfig = () => load(fs.readFileSync(path.join(root, 'electron-builder.yml'), 'utf8')) as BuilderConfig;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('electron-builder.yml', () => {
  it('names the app and builds AppImage and deb, nsis and dmg into release/', () => {
    const config = builderConfig();
    expect(config.appId).toBe('net.screenshot-appliance.app');
    expect(config.productName).toBe('Screenshot Appliance');
    expect(config.directories?.output).toBe('release');
    expect(config.linux?.target).toEqual(['AppImage', 'deb']);
    expect(config.linux?.maintainer).toMatch(/<.+@.+>/);
    expect(config.win?.target).toEqual(['nsis']);
    expect(config.mac?.target).toEqual(['dmg']);
  });

  it('packs the built code and the run-time icons, and unpacks sharp from the archive', () => {
    const config = builderConfig();
    expect(config.files).toEqual(expect.arrayContaining(['dist/**/*', '!dist/test/**', '!dist/.tsbuildinfo/**', 'build/icon.png', 'build/tray/**']));
    expect(config.asarUnpack).toEqual(expect.arrayContaining(['node_modules/sharp/**/*', 'node_modules/@img/**/*']));
  });

  it('packs no file of the electron package or its downloader into app.asar', async () => {
    // electron-builder's own steps: the production modules npm lists (optional ones included),
    // then the files of each that the exclusions of `files` let through.
    const lib = (file: string) => createRequire(import.meta.url)(`app-builder-lib/out/${file}`);
    const { getCollectorByPackageManager, PM } = lib('node-module-collector/index.js');
    const { getNodeModuleFileMatcher, FileMatcher } = lib('fileMatcher.js');
    const { NodeModuleCopyHelper } = lib('util/NodeModuleCopyHelper.js');
    const { TmpDir } = createRequire(import.meta.url)('temp-file');
    const tmp = new TmpDir('sa-packaging');
    const collected = await getCollectorByPackageManager(PM.NPM, root, tmp).getNodeModules({ packageName: 'screenshot-appliance' });
    await tmp.cleanup();
    const packager = { config: builderConfig(), appInfo: { type: 'module' }, debugLogger: { isEnabled: false }, getWorkspaceRoot: async () => root };
    const main = getNodeModuleFileMatcher(root, '/app', (s: string) => s, {}, packager);
    const packed: string[] = [];
    for (const dep of collected.nodeModules as Array<{ name: string; dir: string }>) {
      if (!['electron', '@electron/get', 'extract-zip'].includes(dep.name)) continue;
      const destination = `node_modules/${dep.name}`;
      const copier = new NodeModuleCopyHelper(new FileMatcher(dep.dir, `/app/${destination}`, main.macroExpander, main.patterns), packager);
      const files: string[] = await copier.collectNodeModules(dep, ['.o'], destination);
      packed.push(...files.filter((file) => !copier.metadata.get(file)?.isDirectory()));
    }
    expect(packed).toEqual([]);
  });

  it('starts the compiled main process that package.json names', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { main: string };
    expect(pkg.main).toBe('dist/main/main.js');
    expect(fs.existsSync(path.join(root, 'main', 'main.ts'))).toBe(true);
  });
});

describe('icons', () => {
  it('has a 512×512 app icon', async () => {
    const { width, height, format } = await sharp(path.join(root, 'build', 'icon.png')).metadata();
    expect({ width, height, format }).toEqual({ width: 512, height: 512, format: 'png' });
  });

  it('has a tray icon for every state at 1× and 2×', async () => {
    for (const state of ['idle', 'capturing', 'paused']) {
      const one = await sharp(path.join(root, 'build', 'tray', `${state}.png`)).metadata();
      const two = await sharp(path.join(root, 'build', 'tray', `${state}@2x.png`)).metadata();
      expect([one.width, one.height, two.width, two.height], state).toEqual([16, 16, 32, 32]);
    }
  });
});

describe('electron launcher', () => {
  const electron = '/opt/electron/electron';

  it('runs under xvfb-run on Linux when there is no display', () => {
    expect(electronCommand({ electron, args: ['.'], platform: 'linux', env: {}, uid: 1000 })).toEqual({
      command: 'xvfb-run',
      args: ['-a', '-s', XVFB_SCREEN, electron, '.'],
    });
  });

  it('runs Electron directly where there is a display', () => {
    expect(electronCommand({ electron, args: ['.'], platform: 'linux', env: { DISPLAY: ':0' }, uid: 1000 })).toEqual({
      command: electron,
      args: ['.'],
    });
    expect(electronCommand({ electron, args: ['.'], platform: 'darwin', env: {}, uid: 501 }).command).toBe(electron);
  });

  it('adds --no-sandbox only for root on Linux', () => {
    expect(electronCommand({ electron, args: ['.'], platform: 'linux', env: { DISPLAY: ':1' }, uid: 0 }).args).toEqual([
      '.',
      '--no-sandbox',
    ]);
    expect(electronCommand({ electron, args: ['.'], platform: 'win32', env: {}, uid: undefined }).args).toEqual(['.']);
  });
});

describe('boundaries', () => {
  it('keeps electron out of server/, which the headless server runs in plain Node', () => {
    const offenders = sourceFiles(path.join(root, 'server')).filter((file) =>
      /from\s+['"]electron['"]|import\(\s*['"]electron['"]\s*\)|require\(\s*['"]electron['"]\s*\)/.test(fs.readFileSync(file, 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps the pure parts of main/ free of electron at run time', () => {
    for (const file of ['tray-state.ts', 'tray-menu.ts', 'panel-navigation.ts']) {
      const text = fs.readFileSync(path.join(root, 'main', file), 'utf8');
      expect(text, file).not.toMatch(/import\s+(?!type\b)[^;]*from\s+['"]electron['"]/);
    }
  });
});
