import { describe, expect, it } from 'vitest';

import { parseScreenshotParams } from '../../server/api/screenshot-params.js';
import { MonitorRequest } from '../../server/contract/monitors.js';
import { validateBody } from '../../server/contract/validate.js';
import { ValidationError } from '../../server/domain-errors.js';

/** The refusal of a body: its message and the field it names. */
function refusal(check: () => unknown): { message: string; field: string | undefined } {
  try {
    check();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return { message: (err as ValidationError).message, field: (err as ValidationError).field };
  }
  throw new Error('the body was accepted');
}

const screenshot = (body: Record<string, unknown>) => refusal(() => parseScreenshotParams({ url: 'http://a.test/', ...body }));
const monitor = (body: Record<string, unknown>) => refusal(() => validateBody(MonitorRequest, { url: 'http://a.test/', schedule: { every_minutes: 60 }, ...body }));

describe('validation messages', () => {
  it('say the range of a number that is not a whole number: scale', () => {
    expect(screenshot({ scale: 5 })).toEqual({ message: 'scale must be a number from 1 to 3', field: 'scale' });
    expect(screenshot({ scale: 'big' })).toEqual({ message: 'scale must be a number from 1 to 3', field: 'scale' });
  });

  it('say the range of a number inside an object, named by its path: clip.x', () => {
    expect(screenshot({ clip: { x: -1, y: 0, width: 10, height: 10 } })).toEqual({ message: 'clip.x must be a number from 0 to 100000', field: 'clip' });
  });

  it("say the range of a monitor's threshold", () => {
    expect(monitor({ threshold: 2 })).toEqual({ message: 'threshold must be a number from 0 to 1', field: 'threshold' });
  });

  it('say a header name is invalid, naming it and what a name must be', () => {
    expect(screenshot({ headers: { 'bad name': 'x' } })).toEqual({
      message: `headers has an invalid name "bad name"; a name must be an HTTP token: letters, digits and !#$%&'*+-.^_\`|~`,
      field: 'headers',
    });
    expect(screenshot({ headers: { 'X-Ok': 'x', 'X:Colon': 'y' } }).message).toMatch(/^headers has an invalid name "X:Colon"/);
  });

  it("say every_minutes' range for every_minutes: 0, not that cron is missing", () => {
    expect(monitor({ schedule: { every_minutes: 0 } })).toEqual({ message: 'schedule.every_minutes must be a whole number from 1 to 525600', field: 'schedule' });
    expect(monitor({ schedule: { every_minutes: 'often' } }).message).toBe('schedule.every_minutes must be a whole number from 1 to 525600');
  });

  it('speak of the cron branch when the schedule is a cron too short to be one', () => {
    expect(monitor({ schedule: { cron: '* *' } }).message).toBe('schedule.cron must be a string of at least 9 characters');
  });

  it('say what each kind of schedule is when the value is neither', () => {
    const both = 'schedule must be an object {cron, timezone?} or an object {every_minutes}';
    expect(monitor({ schedule: {} }).message).toBe(both);
    expect(monitor({ schedule: 5 }).message).toBe(both);
    expect(monitor({ schedule: { cron: '*/5 * * * *', every_minutes: 5 } }).message).toBe(both);
  });

  it('say a string or null is too long rather than of the wrong type', () => {
    expect(monitor({ name: 'x'.repeat(201) }).message).toBe('name is longer than 200 characters');
    expect(monitor({ name: 5 }).message).toBe('name must be a string or null');
  });

  it('name an unknown field inside an object, and the fields it takes', () => {
    expect(screenshot({ clip: { x: 0, y: 0, width: 10, height: 10, z: 1 } }).message).toBe('clip has an unknown field z; allowed: x, y, width, height');
    expect(screenshot({ cookies: [{ name: 'a', value: 'b', expires: 1 }] }).message).toBe(
      'cookies[0] has an unknown field expires; allowed: name, value, domain, path, secure, http_only, same_site',
    );
  });

  it('say an entry is listed twice', () => {
    expect(screenshot({ extract: ['text', 'text'] }).message).toBe('extract lists "text" twice');
  });

  it('never fall back to "a valid value" or "an object" for the fields named in the report', () => {
    const messages = [
      screenshot({ scale: 0 }),
      screenshot({ clip: { x: 0, y: 'a', width: 10, height: 10 } }),
      screenshot({ headers: { 'a b': 'c' } }),
      monitor({ threshold: -1 }),
      monitor({ schedule: { every_minutes: 0 } }),
    ].map((r) => r.message);
    for (const message of messages) expect(message).not.toMatch(/a valid value|must be an object$|schedule\.cron is required/);
  });
});
