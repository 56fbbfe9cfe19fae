import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { staleBuildReason } from '../../scripts/serve.mjs';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1) + seconds * 1000);

/** A tree with one source and one output, the source written at 10 s and the output at 20 s. */
async function builtTree(): Promise<string> {
  const root = await tempDir('sa-serve-');
  dirs.push(root);
  await fs.mkdir(path.join(root, 'src/deep'), { recursive: true });
  await fs.mkdir(path.join(root, 'out'));
  await fs.writeFile(path.join(root, 'src/deep/a.ts'), '');
  await fs.writeFile(path.join(root, 'out/a.js'), '');
  for (const dir of ['src/deep', 'src']) await fs.utimes(path.join(root, dir), at(10), at(10));
  await fs.utimes(path.join(root, 'src/deep/a.ts'), at(10), at(10));
  await fs.utimes(path.join(root, 'out/a.js'), at(20), at(20));
  return root;
}

const check = (root: string) => staleBuildReason({ root, sources: ['src', 'lock.json'], outputs: ['out/a.js'] });

describe('the up-to-date check of npm run serve', () => {
  it('finds a build newer than every source up to date', async () => {
    expect(check(await builtTree())).toBeNull();
  });

  it('builds when an output is missing, as on a fresh clone', async () => {
    const root = await builtTree();
    await fs.rm(path.join(root, 'out/a.js'));
    expect(check(root)).toBe('out/a.js is missing');
  });

  it('builds when a source deep in the tree is newer than the build', async () => {
    const root = await builtTree();
    await fs.utimes(path.join(root, 'src/deep/a.ts'), at(30), at(30));
    expect(check(root)).toBe('src changed since the last build');
  });

  it('builds when a file was removed from a source directory', async () => {
    const root = await builtTree();
    // Removing a file changes nothing but its directory's time.
    await fs.utimes(path.join(root, 'src/deep'), at(30), at(30));
    expect(check(root)).toBe('src changed since the last build');
  });

  it('builds when a single-file source such as the lockfile changed', async () => {
    const root = await builtTree();
    await fs.writeFile(path.join(root, 'lock.json'), '{}');
    expect(check(root)).toBe('lock.json changed since the last build');
  });

  it('ignores installed packages under a source directory', async () => {
    const root = await builtTree();
    await fs.mkdir(path.join(root, 'src/node_modules/x'), { recursive: true });
    await fs.writeFile(path.join(root, 'src/node_modules/x/index.js'), '');
    await fs.utimes(path.join(root, 'src'), at(10), at(10));
    expect(check(root)).toBeNull();
  });
});
