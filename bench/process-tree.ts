import fs from 'node:fs';

/**
 * Memory and file descriptors of a process and its descendants, read from Linux /proc.
 * A process that exits while it is being read is skipped: the figures are a snapshot.
 */

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Parent pid and command name of every live process. */
function processTable(): Map<number, { ppid: number; comm: string }> {
  const table = new Map<number, { ppid: number; comm: string }>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readText(`/proc/${entry}/stat`);
    if (!stat) continue;
    // The command sits in parentheses and may itself hold spaces and parentheses.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    table.set(Number(entry), { ppid, comm });
  }
  return table;
}

/** `pid` and every process below it. */
export function processTree(pid: number): Array<{ pid: number; ppid: number; comm: string }> {
  const table = processTable();
  const out: Array<{ pid: number; ppid: number; comm: string }> = [];
  const queue = [pid];
  while (queue.length) {
    const current = queue.shift()!;
    const info = table.get(current);
    if (!info) continue;
    out.push({ pid: current, ppid: info.ppid, comm: info.comm });
    for (const [child, childInfo] of table) if (childInfo.ppid === current) queue.push(child);
  }
  return out;
}

/** Resident set size of one process, in bytes (0 when it is gone). */
export function rssOf(pid: number): number {
  const status = readText(`/proc/${pid}/status`);
  const kb = status ? /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] : undefined;
  return kb ? Number(kb) * 1024 : 0;
}

/**
 * Proportional set size of one process, in bytes: shared pages divided among the processes
 * sharing them, so a browser's processes can be summed without counting its code ten times.
 * Falls back to RSS where smaps_rollup is unavailable; 0 when the process is gone.
 */
export function pssOf(pid: number): number {
  const rollup = readText(`/proc/${pid}/smaps_rollup`);
  const kb = rollup ? /^Pss:\s+(\d+)\s+kB/m.exec(rollup)?.[1] : undefined;
  return kb ? Number(kb) * 1024 : rssOf(pid);
}

/** Open file descriptors of one process (0 when it is gone). */
export function openFds(pid: number): number {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

export interface TreeSnapshot {
  /** RSS of `pid` itself, bytes. */
  rss: number;
  /** Summed proportional set size of its descendants (the browsers), bytes. */
  childrenPss: number;
  /** Open descriptors of `pid` itself. */
  fds: number;
  /** Processes in the tree, `pid` included. */
  processes: number;
}

export function snapshotTree(pid: number): TreeSnapshot {
  const tree = processTree(pid);
  return {
    rss: rssOf(pid),
    childrenPss: tree.filter((p) => p.pid !== pid).reduce((sum, p) => sum + pssOf(p.pid), 0),
    fds: openFds(pid),
    processes: tree.length,
  };
}

/**
 * The Chromium main processes `pid` launched: each a child of `pid`'s pipe guard (PipeGuard, a
 * node process between the service and its browser), or of `pid` itself. Processes of another
 * service `pid` started (a server under test) are not among them.
 */
export function browserProcesses(pid: number): number[] {
  const tree = processTree(pid);
  const launcher = new Set([pid, ...tree.filter((p) => p.ppid === pid && isPipeGuard(p.pid)).map((p) => p.pid)]);
  return tree.filter((p) => launcher.has(p.ppid) && /chrom/i.test(p.comm)).map((p) => p.pid);
}

function isPipeGuard(pid: number): boolean {
  return (readText(`/proc/${pid}/cmdline`) ?? '').includes('pipe-guard');
}

/**
 * Summed proportional set size of the browsers `pid` launched (browserProcesses, and everything
 * below them, their pipe guards left out), leaving out its other children such as a service
 * under test.
 */
export function browsersPss(pid: number): number {
  return browserProcesses(pid)
    .flatMap((root) => processTree(root))
    .reduce((sum, p) => sum + pssOf(p.pid), 0);
}
