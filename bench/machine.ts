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

/** USER_HZ: /proc/stat counts CPU time in 1/100 s on Linux. */
const TICK_MS = 10;

/**
 * CPU time the whole machine has spent busy so far, all cores summed, in ms: user, nice,
 * system, irq and softirq time from /proc/stat (idle, iowait and steal left out). Counted this
 * way nothing a capture causes escapes, not even processes that outlive the browser that
 * started them; other work on the machine is counted too, so measure on an idle machine.
 */
export function busyCpuMs(): number {
  const line = fs.readFileSync('/proc/stat', 'latin1').split('\n', 1)[0];
  const [user, nice, system, , , irq, softirq] = line.trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq) * TICK_MS;
}
