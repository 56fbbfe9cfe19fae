import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { treeCpuMs } from '../../bench/process-tree.js';

// A node process that burns `ms` of its own CPU, then optionally starts the same in a child of
// its own and waits for it, prints "ready" and stays alive until its stdin closes.
const BURNER = `
const burn = (ms) => { const start = process.cpuUsage(); while (process.cpuUsage(start).user < ms * 1000) for (let i = 0; i < 1e6; i++); };
const { spawnSync } = require('node:child_process');
burn(Number(process.argv[1]));
if (process.argv[2]) spawnSync(process.execPath, ['-e', '(' + burn + ')(' + process.argv[2] + ')']);
process.stdout.write('ready');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`;

/** ms of CPU in this process, all threads, as /proc counts it. */
const ownCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

describe('treeCpuMs', () => {
  it('counts a live child, a grandchild it reaped, and the child once it has exited, each once', async () => {
    const before = treeCpuMs(process.pid);
    const ownBefore = ownCpuMs();
    const child = spawn(process.execPath, ['-e', BURNER, '300', '200'], { stdio: ['pipe', 'pipe', 'inherit'] });
    await once(child.stdout, 'data');

    // The child is alive: its own 300 ms, and the grandchild's 200 ms in its children's times.
    const whileAlive = treeCpuMs(process.pid) - before - (ownCpuMs() - ownBefore);
    expect(whileAlive).toBeGreaterThanOrEqual(480);

    const exited = once(child, 'exit');
    child.stdin.end();
    await exited;
    // Reaped now: all of it has moved into this process's children's times, and is not counted twice.
    const afterExit = treeCpuMs(process.pid) - before - (ownCpuMs() - ownBefore);
    expect(afterExit).toBeGreaterThanOrEqual(480);
    // Starting two node processes costs some CPU of its own; counting anything twice would add 500.
    expect(afterExit).toBeLessThan(whileAlive + 250);
  });
});
