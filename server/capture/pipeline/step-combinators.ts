import { withDeadline } from '../../deadline.js';
import { captureTimedOut, loadTimedOut } from '../capture-failures.js';
import type { Capture, CaptureCondition, CaptureStep } from './capture-state.js';

// How the steps of CAPTURE_STEPS are put together: one after the other, all at once, only for
// the captures they concern, and within one of the request's time-outs.

/** Runs `steps` one after the other. */
export async function runSteps(capture: Capture, steps: readonly CaptureStep[]): Promise<void> {
  for (const step of steps) await step(capture);
}

/**
 * Starts `steps` at once, in this order, and waits for them all: steps that only send CDP
 * commands then cost one round trip's wait together.
 */
export const together =
  (...steps: CaptureStep[]): CaptureStep =>
  async (capture) => {
    await Promise.all(steps.map((step) => step(capture)));
  };

/** Runs `steps` in order when `condition` holds for the capture; nothing otherwise. */
export const when =
  (condition: CaptureCondition, ...steps: CaptureStep[]): CaptureStep =>
  async (capture) => {
    if (condition(capture)) await runSteps(capture, steps);
  };

/**
 * Runs `steps` in order within the navigation time-out (from now: `navigationStarted`), the
 * capture failing as one that did not load when they take longer, and with the first failure
 * from outside the page (the tripwire) when one comes first.
 */
export const withinNavigationTime =
  (...steps: CaptureStep[]): CaptureStep =>
  async (capture) => {
    const { url, navigationTimeoutMs } = capture.request;
    capture.navigationStarted = Date.now();
    await withDeadline(capture.options.tripwire.race(runSteps(capture, steps)), navigationTimeoutMs, () => loadTimedOut(url, navigationTimeoutMs));
  };

/**
 * Runs `steps` in order within the capture time-out (from now: `deadline`), the capture failing
 * as one that timed out when they take longer, and with the first failure from outside the page
 * (the tripwire) when one comes first.
 */
export const withinCaptureTime =
  (...steps: CaptureStep[]): CaptureStep =>
  async (capture) => {
    const { url, captureTimeoutMs } = capture.request;
    capture.deadline = Date.now() + captureTimeoutMs;
    await withDeadline(capture.options.tripwire.race(runSteps(capture, steps)), captureTimeoutMs, () => captureTimedOut(url, captureTimeoutMs));
  };

/** How much of the navigation time-out is left, in ms (negative once it has passed). */
export const navigationTimeLeft = (capture: Capture): number => capture.request.navigationTimeoutMs - (Date.now() - capture.navigationStarted);
