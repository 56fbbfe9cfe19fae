import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/** The machine a benchmark ran on, to print beside its figures. */
export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  chromium: string;
  node: string;
  kernel: string;
  /** 1-minute load average when the run started and ended: other work on the machine skews figures. */
  loadAtStart: number;
  loadAtEnd?: number;
}

export function describeMachine(chromiumPath: string): MachineInfo {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  let chromium = 'unknown';
  try {
    chromium = execFileSync(chromiumPath, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    // reported as unknown
  }
  return {
    cpus: os.availableParallelism(),
    cpuModel: /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    chromium,
    node: process.version,
    kernel: os.release(),
    loadAtStart: os.loadavg()[0],
  };
}
