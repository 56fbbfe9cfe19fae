import { ValidationError } from '../domain-errors.js';
import { SECRET_KEY_FILE } from '../store/data-dir.js';
import type { MonitorRecord } from '../store/records/monitor-record.js';

/**
 * A monitor's secret capture fields (headers, cookies, http_auth, html), or its options sealed
 * with them for their size (styles, scripts, selectors), are not kept any more: a data directory
 * restored from a backup holds none (as for a job's), or the key that sealed them changed. Its
 * checks fail saying so, naming them, never capture without them (a logged-out page, or one
 * without its styles, would pass for the page), until the fields are given again.
 */
export class MonitorSecretsLostError extends ValidationError {
  constructor(monitor: Pick<MonitorRecord, '_id' | 'secret_fields'>, unreadable: boolean, remedy = `give them again with PATCH /v1/monitors/${monitor._id}`) {
    const fields = monitor.secret_fields.join(', ');
    super(
      unreadable
        ? `The monitor's ${fields} could not be read: the data directory's ${SECRET_KEY_FILE} changed since they were sealed; ${remedy}`
        : `The monitor's ${fields} are no longer kept (a data directory restored from a backup holds none); ${remedy}`,
      monitor.secret_fields[0],
    );
  }
}
