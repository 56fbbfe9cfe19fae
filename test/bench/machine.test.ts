import { spawn } from 'node:child_process';
import { once } from 'node:events';

import { describe, expect, it } from 'vitest';

import { busyCpuMs } from '../../bench/machine.js';

describe('busyCpuMs', () => {
  it('counts CPU used by a process that exits, reaped or not', async () => {
    const before = busyCpuMs();
    // Burns 300 ms of its own CPU, checking its usage only every million iterations.
    const burner = spawn(process.execPath, [
      '-e',
      'const s = process.cpuUsage(); while (process.cpuUsage(s).user < 300_000) for (let i = 0; i < 1e6; i++);',
    ]);
    await once(burner, 'exit');
    // Other work on the machine only adds to the figure, so the lower bound holds anywhere.
    expect(busyCpuMs() - before).toBeGreaterThanOrEqual(290);
  });
});
