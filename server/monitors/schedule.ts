import { CronExpressionParser } from 'cron-parser';

import { ValidationError } from '../domain-errors.js';
import type { MonitorSchedule } from '../store/records/monitor-record.js';
import { timeZoneName } from '../time-zone.js';

const MINUTE_MS = 60_000;

/**
 * Checks a schedule against what a schema cannot say: a cron expression of exactly 5 fields
 * (no seconds field) that parses, a time zone that exists, and no two occurrences closer than
 * `minMinutes` (the admin's floor). Throws ValidationError naming `schedule`.
 */
export function checkSchedule(schedule: MonitorSchedule, minMinutes: number, now: number): void {
  if ('every_minutes' in schedule) {
    if (schedule.every_minutes < minMinutes) {
      throw new ValidationError(`schedule.every_minutes must be at least ${minMinutes} (the shortest interval this service allows)`, 'schedule');
    }
    return;
  }
  const fields = schedule.cron.trim().split(/\s+/);
  if (fields.length !== 5) throw new ValidationError('schedule.cron must have 5 fields: minute hour day-of-month month day-of-week', 'schedule');
  if (schedule.timezone !== undefined && timeZoneName(schedule.timezone) === null) {
    throw new ValidationError(`schedule.timezone must be an IANA time zone such as Europe/Paris; ${schedule.timezone} is not one`, 'schedule');
  }
  let times: number[];
  try {
    const expression = CronExpressionParser.parse(schedule.cron, { currentDate: new Date(now), tz: schedule.timezone ?? 'UTC' });
    times = expression.take(50).map((date) => date.getTime());
  } catch (err) {
    throw new ValidationError(`schedule.cron is not a valid cron expression: ${(err as Error).message}`, 'schedule');
  }
  for (let i = 1; i < times.length; i++) {
    if (times[i] - times[i - 1] < minMinutes * MINUTE_MS) {
      throw new ValidationError(`schedule.cron runs more often than every ${minMinutes} minute(s), the shortest interval this service allows`, 'schedule');
    }
  }
}

/**
 * The occurrence of `schedule` that follows `from` (a past occurrence, or the time a monitor was
 * created or resumed) and is later than `now`: occurrences missed while the service was down are
 * not replayed, one by one; the schedule resumes with its next one. An interval keeps its phase
 * (from + k × interval); a cron expression is read in its time zone (UTC by default).
 */
export function nextOccurrence(schedule: MonitorSchedule, from: number, now: number = from): number {
  if ('every_minutes' in schedule) {
    const step = schedule.every_minutes * MINUTE_MS;
    return from + Math.max(1, Math.floor((now - from) / step) + 1) * step;
  }
  const expression = CronExpressionParser.parse(schedule.cron, { currentDate: new Date(Math.max(from, now)), tz: schedule.timezone ?? 'UTC' });
  return expression.next().getTime();
}
