import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The layers of .dependency-cruiser.cjs, as `npm run lint` checks them: on a small tree made for
// the purpose (a store importing the api, two modules importing each other's types), and on
// the real one.

const root = path.resolve('.');
const depcruise = path.join(root, 'node_modules', '.bin', 'depcruise');

/** The dependency check of `npm run lint`, as its arguments. */
function lintArgs(): string[] {
  const lint = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.lint;
  const command = lint
    .split('&&')
    .map((part) => part.trim())
    .find((part) => part.startsWith('depcruise '));
  if (!command) throw new Error('npm run lint runs no depcruise');
  return command.split(/\s+/).slice(1);
}

function check(cwd: string, args: string[]): { status: number | null; output: string } {
  const res = spawnSync(depcruise, args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
  return { status: res.status, output: `${res.stdout}${res.stderr}` };
}

describe('the layers lint', () => {
  let tree: string;
  let probe: { status: number | null; output: string };

  beforeAll(() => {
    tree = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
    for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json']) fs.copyFileSync(path.join(root, file), path.join(tree, file));
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
      fs.writeFileSync(path.join(tree, file), text);
    };
    write('server/api/probe.ts', 'export interface ProbeView { id: string }\n');
    write('server/store/probe.ts', "import type { ProbeView } from '../api/probe.js';\n\nexport type StoredProbe = ProbeView & { _id: string };\n");
    write('server/a.ts', "import type { B } from './b.js';\n\nexport interface A { b?: B }\n");
    write('server/b.ts', "import type { A } from './a.js';\n\nexport interface B { a?: A }\n");
    probe = check(tree, ['--config', '.dependency-cruiser.cjs', 'server']);
  }, 120_000);

  afterAll(() => fs.rmSync(tree, { recursive: true, force: true }));

  it('fails a store file that imports from api/, even for a type', () => {
    expect(probe.status).not.toBe(0);
    expect(probe.output).toMatch(/error store-imports-only-below: server\/store\/probe\.ts → server\/api\/probe\.ts/);
  });

  it('fails two modules that import each other, even for types only', () => {
    expect(probe.status).not.toBe(0);
    expect(probe.output).toMatch(/error no-circular: server\/[ab]\.ts →/);
  });

  it('passes the tree as it is', () => {
    const real = check(root, lintArgs());
    expect(real.output).toContain('no dependency violations found');
    expect(real.status).toBe(0);
  }, 120_000);
});
