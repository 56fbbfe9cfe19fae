/** Summary figures of one measured run. */
export interface RunSummary {
  /** e.g. "service", "raw", "new-browser" */
  method: string;
  concurrency: number;
  captures: number;
  failures: number;
  seconds: number;
  capturesPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  /** Peak resident memory of the process under test and its browsers, bytes (PSS for browsers). */
  peakRssBytes: number;
  /**
   * CPU time per capture, ms: the whole machine's busy time over the method's own turns (the
   * benchmark's memory sampling left out), so whatever a capture causes is in it.
   */
  cpuMsPerCapture: number;
  /** That busy time as a share of what all cores could give over the same turns, 0–1. */
  cpuBusyShare: number;
}

/** The q-quantile (0–1) of `values` by the nearest-rank method; 0 for no values. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

export function summarise(
  method: string,
  concurrency: number,
  latenciesMs: number[],
  failures: number,
  seconds: number,
  peakRssBytes: number,
  cpuMs: number,
  cores: number,
): RunSummary {
  return {
    method,
    concurrency,
    captures: latenciesMs.length,
    failures,
    seconds,
    capturesPerSecond: latenciesMs.length / seconds,
    p50Ms: quantile(latenciesMs, 0.5),
    p95Ms: quantile(latenciesMs, 0.95),
    peakRssBytes,
    cpuMsPerCapture: latenciesMs.length ? cpuMs / latenciesMs.length : 0,
    cpuBusyShare: seconds > 0 ? cpuMs / (seconds * 1000 * cores) : 0,
  };
}

export interface LoopResult {
  /** Latency of every task that succeeded, with its index. */
  samples: Array<{ index: number; ms: number }>;
  latenciesMs: number[];
  failures: number;
  seconds: number;
  errors: string[];
}

/**
 * Runs `total` tasks over `lanes` parallel loops (a closed loop: each lane starts its next
 * task when the previous one ends) and returns every task's latency and the wall time.
 */
export async function closedLoop(total: number, lanes: number, task: (index: number) => Promise<void>): Promise<LoopResult> {
  const samples: Array<{ index: number; ms: number }> = [];
  const errors: string[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t0 = performance.now();
        try {
          await task(i);
          samples.push({ index: i, ms: performance.now() - t0 });
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { samples, latenciesMs: samples.map((s) => s.ms), failures: errors.length, seconds, errors };
}
