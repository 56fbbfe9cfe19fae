import { app } from 'electron';

/**
 * One app per user: a second launch hands over to the first (which opens its control panel
 * on `second-instance`) and quits. Returns whether this process is the one that runs.
 */
export function setupSingleInstance(): boolean {
  if (app.requestSingleInstanceLock()) return true;
  app.quit();
  return false;
}
