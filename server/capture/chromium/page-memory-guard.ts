import fs from 'node:fs';

import { type Logger, silentLogger } from '../../logger.js';

/** How often the renderers' memory is read. A page growing 0.3 GB/s overshoots by at most ~75 MB. */
const POLL_MS = 250;
/**
 * A page crash this soon after a kill may be taken to be that kill. The crash arrives well within
 * a second (killed renderer to the page's `crash` event, two captures at a time on 2 cores at a
 * load average near 10: median 142 ms, slowest 530 ms of 10), but a machine busy enough to stall
 * the browser for seconds must not turn a page stopped for its memory into a crash, retried and
 * stopped again. A longer window costs little: only a kill that no page claims (a frame's own
 * renderer, whose page does not crash) stays longer, to be mistaken for another page's crash.
 */
const KILL_ATTRIBUTION_MS = 20_000;

function read(file: string): string | null {
  try {
    return fs.readFileSync(file, 'latin1');
  } catch {
    return null;
  }
}

/** Direct children of a process, from every one of its threads (Chromium starts them from a launcher thread). */
function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tasks.flatMap((tid) => (read(`/proc/${pid}/task/${tid}/children`) ?? '').split(' ').filter(Boolean).map(Number));
}

/** Resident memory of a process in bytes, 0 when it is gone. */
function residentBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(read(`/proc/${pid}/status`) ?? '')?.[1];
  return kb ? Number(kb) * 1024 : 0;
}

/** Renderer processes below the browser (the zygote's children), found through /proc. */
function renderers(browserPid: number): number[] {
  const out: number[] = [];
  const queue = childrenOf(browserPid);
  while (queue.length) {
    const pid = queue.shift()!;
    if ((read(`/proc/${pid}/cmdline`) ?? '').includes('--type=renderer')) out.push(pid);
    queue.push(...childrenOf(pid));
  }
  return out;
}

/**
 * Stops a page that takes more memory than it is allowed: while captures run, the resident size
 * of each of the browser's renderer processes is read from /proc every 250 ms, and a renderer
 * above the limit is killed. Each job has a context and so a renderer of its own, so only that
 * job's page crashes, and the engine reports the crash as this (claimKill). Without it such
 * a page is stopped only by the capture time-out, and may take the machine's memory first.
 * Where /proc is missing (not Linux) the guard does nothing.
 */
export class PageMemoryGuard {
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  private readonly onKill: () => void;
  /** Extra memory granted to captures now rendering a large bitmap (allow()). */
  private readonly allowances = new Set<{ bytes: number }>();
  /** Kills not yet claimed by a page's crash: the renderer and when (performance.now()). */
  private unclaimedKills: Array<{ pid: number; at: number }> = [];

  constructor(
    private readonly browserPid: number,
    readonly limitBytes: number,
    options: {
      /** Reading /proc costs about 1 ms a time, so it is done only while this says captures run. */
      busy?: () => boolean;
      log?: Logger;
      /** Called once for each renderer killed. */
      onKill?: () => void;
    } = {},
  ) {
    this.log = options.log ?? silentLogger;
    this.onKill = options.onKill ?? (() => undefined);
    if (!fs.existsSync(`/proc/${browserPid}/task`)) return;
    const busy = options.busy ?? (() => true);
    this.timer = setInterval(() => busy() && this.check(), POLL_MS);
    this.timer.unref();
  }

  /**
   * Called for a page whose renderer died: true when that was one of our kills, made within
   * KILL_ATTRIBUTION_MS and not yet claimed by another page's crash. Each kill is claimed once, so a
   * renderer killed from outside right after one of ours is not mistaken for it (unless their
   * crashes arrive in the other order, which the count cannot tell apart).
   */
  claimKill(): boolean {
    const now = performance.now();
    this.unclaimedKills = this.unclaimedKills.filter((kill) => now - kill.at < KILL_ATTRIBUTION_MS);
    return this.unclaimedKills.shift() !== undefined;
  }

  /**
   * Lets renderers use `bytes` more than the limit until the returned function is called. A
   * capture asks for the size of the bitmap its screenshot needs (MAX_CAPTURE_PIXELS bounds it):
   * rendering a tall page beyond the viewport takes the page's renderer some hundreds of MiB
   * (measured: 0.15 GiB before, 0.65 GiB during a 150 M pixel capture), which is the capture's
   * doing, not the page's, and must not get the page killed. The guard cannot tell which renderer
   * is whose, so while any allowance is held every renderer gets the largest one (not their sum:
   * each capture adds to its own renderer only).
   */
  allow(bytes: number): () => void {
    const allowance = { bytes: Math.max(0, bytes) };
    this.allowances.add(allowance);
    return () => this.allowances.delete(allowance);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private check(): void {
    const limit = this.limitBytes + Math.max(0, ...[...this.allowances].map((a) => a.bytes));
    for (const pid of renderers(this.browserPid)) {
      const bytes = residentBytes(pid);
      if (bytes <= limit) continue;
      // A renderer still dying when read again is one kill, not two.
      if (!this.unclaimedKills.some((kill) => kill.pid === pid)) {
        this.unclaimedKills.push({ pid, at: performance.now() });
        this.onKill();
      }
      const mib = (n: number) => Math.round(n / 2 ** 20);
      this.log.warn({ pid }, `killing a page's renderer: ${mib(bytes)} MiB of memory, more than ${mib(limit)} MiB`);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }
}
