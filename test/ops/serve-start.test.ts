import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';

import { afterAll, describe, expect, it } from 'vitest';

import { staleBuildReason } from '../../scripts/serve.mjs';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

describe('npm run serve with the build up to date', () => {
  it('starts the built server without building', async () => {
    // A root holding only the script and the build (a link to this tree's dist/), so no source
    // can be newer than the build whatever is being edited elsewhere in the tree meanwhile.
    const root = await tempDir('sa-serve-root-');
    const dataDir = await tempDir();
    dirs.push(root, dataDir);
    await fs.mkdir(path.join(root, 'scripts'));
    await fs.copyFile(path.resolve('scripts/serve.mjs'), path.join(root, 'scripts/serve.mjs'));
    await fs.symlink(path.resolve('dist'), path.join(root, 'dist'));
    expect(staleBuildReason({ root })).toBeNull();

    const started = performance.now();
    const child = spawn(process.execPath, [path.join(root, 'scripts/serve.mjs'), '--host', '127.0.0.1', '--port', '0', '--browsers', '1', '--data', dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const firstLine = await new Promise<string>((resolve, reject) => {
        readline.createInterface({ input: child.stdout }).once('line', resolve);
        void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
      });
      const ms = performance.now() - started;
      expect(firstLine).toMatch(/^Screenshot Appliance listening on http:\/\/127\.0\.0\.1:\d+$/);
      expect(stderr).not.toContain('Building first');
      // Measured at 1-2 s; a build takes 20 s quiet and 150 s loaded. The bound is only far below a
      // build, so a loaded machine cannot break it, and the real figure is logged for the record.
      expect(ms).toBeLessThan(15_000);
      console.log(`npm run serve with the build up to date: listening after ${Math.round(ms)} ms`);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
