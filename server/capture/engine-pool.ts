import { type BrowserCount, BrowserCrashedError, type CaptureEngine, type CaptureRequest, type CaptureResult } from './engine.js';

/** An engine the pool can share captures with. */
export interface PoolableEngine extends CaptureEngine {
  /** Settles once the engine knows whether its browser is still there (ChromiumEngine.checkBrowser). */
  checkBrowser(): Promise<void>;
}

/**
 * Several engines, each with a browser of its own, behind one CaptureEngine.
 *
 * Why: much of a capture runs on the browser process's one main thread (creating and closing
 * the job's window and context, committing the navigation, encoding the PNG). With one browser,
 * two captures at a time take turns on that thread while the other core waits: the benchmark's
 * mix kept the two cores 83–85 % busy. With two browsers they are 95–97 % busy and the mix runs
 * 3.54–3.58 captures/s instead of 3.02–3.12 (in-process, two at a time; docs/performance.md).
 *
 * Each capture goes to a ready engine with the fewest captures running, ties to the one used
 * least recently, so the work and the browsers' wear (recycling) are shared evenly. An engine
 * whose browser is down is passed over while another is ready; a crash fails only the captures
 * in that browser, and the engine relaunches it as it would on its own. Before a crash is
 * reported, the other browsers are checked, so the job's retry goes to one that is alive (or
 * is relaunched) when they were all killed together.
 */
export class EnginePool implements CaptureEngine {
  readonly name: string;
  private readonly running: number[];
  private readonly lastUsed: number[];
  private uses = 0;

  constructor(private readonly engines: readonly PoolableEngine[]) {
    if (engines.length === 0) throw new Error('EnginePool needs at least one engine');
    this.name = engines[0].name;
    this.running = engines.map(() => 0);
    this.lastUsed = engines.map(() => 0);
  }

  async start(): Promise<void> {
    await Promise.all(this.engines.map((engine) => engine.start()));
  }

  async capture(request: CaptureRequest): Promise<CaptureResult> {
    const k = this.pick();
    this.running[k]++;
    this.lastUsed[k] = ++this.uses;
    try {
      return await this.engines[k].capture(request);
    } catch (err) {
      if (err instanceof BrowserCrashedError) {
        await Promise.all(this.engines.filter((_, j) => j !== k).map((engine) => engine.checkBrowser()));
      }
      throw err;
    } finally {
      this.running[k]--;
    }
  }

  isReady(): boolean {
    return this.engines.some((engine) => engine.isReady());
  }

  browsers(): BrowserCount {
    const down = this.engines.flatMap((engine, i) => (engine.isReady() ? [] : [i + 1]));
    return { total: this.engines.length, ready: this.engines.length - down.length, down };
  }

  chromiumVersion(): string {
    const ready = this.engines.find((engine) => engine.isReady()) ?? this.engines[0];
    return ready.chromiumVersion();
  }

  async close(): Promise<void> {
    const results = await Promise.allSettled(this.engines.map((engine) => engine.close()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** The engine the next capture goes to. */
  private pick(): number {
    const candidates = this.engines.map((_, k) => k);
    const ready = candidates.filter((k) => this.engines[k].isReady());
    let best = -1;
    for (const k of ready.length ? ready : candidates) {
      if (
        best < 0 ||
        this.running[k] < this.running[best] ||
        (this.running[k] === this.running[best] && this.lastUsed[k] < this.lastUsed[best])
      ) {
        best = k;
      }
    }
    return best;
  }
}
