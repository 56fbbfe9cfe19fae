import type { MonitorEventData } from '../contract/monitors.js';

/** What a monitor tells of a check: the signed webhook's `type` and `data`, which its notifications say again. */
export interface MonitorEvent {
  type: 'monitor.changed' | 'monitor.inconclusive' | 'monitor.failed';
  data: MonitorEventData;
}
