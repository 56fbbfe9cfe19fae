import type { Logger } from './logger.js';

/**
 * One step of starting and stopping the services: the steps start in their order and stop in
 * the reverse, so each stops while what it needs still runs.
 */
export interface LifecycleStep {
  name: string;
  start?: () => Promise<unknown> | void;
  /** `graceMs`: how long running captures have to finish. */
  stop?: (graceMs: number) => Promise<unknown> | void;
}

/** Starts the steps in order; the first that fails stops the start (the caller stops them all). */
export async function startSteps(steps: readonly LifecycleStep[]): Promise<void> {
  for (const step of steps) await step.start?.();
}

/** Stops the steps, last first; one that fails is logged and the others stop all the same. */
export async function stopSteps(steps: readonly LifecycleStep[], log: Logger, graceMs: number): Promise<void> {
  for (const step of [...steps].reverse()) {
    try {
      await step.stop?.(graceMs);
    } catch (err) {
      log.error({ err }, `stopping ${step.name} failed`);
    }
  }
}
