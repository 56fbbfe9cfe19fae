import fs from 'node:fs';

/** How often the renderers' memory is read. A page growing 0.3 GB/s overshoots by at most ~75 MB. */
const POLL_MS = 250;
/** A page crash this soon after a kill is taken to be that kill. */
const KILL_ATTRIBUTION_MS = 5_000;

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
 * job's page crashes, and the engine reports the crash as this (killedRecently). Without it such
 * a page is stopped only by the capture time-out, and may take the machine's memory first.
 * Where /proc is missing (not Linux) the guard does nothing.
 */
export class PageMemoryGuard {
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly log: (line: string) => void;
  private lastKill = -Infinity;

  constructor(
    private readonly browserPid: number,
    readonly limitBytes: number,
    options: {
      /** Reading /proc costs about 1 ms a time, so it is done only while this says captures run. */
      busy?: () => boolean;
      log?: (line: string) => void;
    } = {},
  ) {
    this.log = options.log ?? (() => undefined);
    if (!fs.existsSync(`/proc/${browserPid}/task`)) return;
    const busy = options.busy ?? (() => true);
    this.timer = setInterval(() => busy() && this.check(), POLL_MS);
    this.timer.unref();
  }

  /** True when a renderer was killed for its memory in the last few seconds. */
  killedRecently(): boolean {
    return performance.now() - this.lastKill < KILL_ATTRIBUTION_MS;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private check(): void {
    for (const pid of renderers(this.browserPid)) {
      const bytes = residentBytes(pid);
      if (bytes <= this.limitBytes) continue;
      this.lastKill = performance.now();
      const mib = (n: number) => Math.round(n / 2 ** 20);
      this.log(`chromium: killing a page's renderer (pid ${pid}): ${mib(bytes)} MiB of memory, more than ${mib(this.limitBytes)} MiB`);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }
}
