/** What the tray needs to know about the capture queue (JobService.stats(), the queue's front door). */
export interface QueueSnapshot {
  /** Jobs waiting for a slot. */
  pending: number;
  /** Jobs being captured now. */
  running: number;
  paused: boolean;
}

export type TrayIconName = 'idle' | 'capturing' | 'paused';

export interface TrayState {
  icon: TrayIconName;
  /** Short status, also the first (disabled) line of the tray menu: "Capturing 2 · 5 waiting". */
  label: string;
  tooltip: string;
  paused: boolean;
}

export const PRODUCT_NAME = 'Screenshot Appliance';

/**
 * The tray's icon and text for a queue snapshot. Paused wins over capturing: jobs already
 * running finish while paused, and the admin needs to see that nothing new will start.
 */
export function trayStateFor(stats: QueueSnapshot): TrayState {
  const waiting = stats.pending > 0 ? ` · ${stats.pending} waiting` : '';
  let icon: TrayIconName;
  let status: string;
  if (stats.paused) {
    icon = 'paused';
    status = stats.running > 0 ? `Paused (finishing ${stats.running})` : 'Paused';
  } else if (stats.running > 0) {
    icon = 'capturing';
    status = `Capturing ${stats.running}`;
  } else {
    icon = 'idle';
    status = 'Idle';
  }
  const label = status + waiting;
  return { icon, label, tooltip: `${PRODUCT_NAME} — ${label}`, paused: stats.paused };
}
