import { describe, expect, it } from 'vitest';

import { ListenerList } from '../server/listener-list.js';
import type { Logger } from '../server/logger.js';
import { type LifecycleStep, startSteps, stopSteps } from '../server/service-lifecycle.js';

// The services' start and stop as one ordered list of steps, and the event list that lets what
// is built later hear what was built before.

/** A logger keeping the messages of its errors. */
function errorLog() {
  const errors: string[] = [];
  const log = { error: (_fields: unknown, message: string) => errors.push(message) } as unknown as Logger;
  return { log, errors };
}

/** Steps that note in `done` when each starts and stops. */
function noted(names: string[], done: string[]): LifecycleStep[] {
  return names.map((name) => ({ name, start: () => void done.push(`start ${name}`), stop: (graceMs) => void done.push(`stop ${name} ${graceMs}`) }));
}

describe('startSteps and stopSteps', () => {
  it('start the steps in their order and stop them in the reverse, each stop given the grace', async () => {
    const done: string[] = [];
    const steps = noted(['stores', 'browser', 'runner'], done);
    await startSteps(steps);
    await stopSteps(steps, errorLog().log, 250);
    expect(done).toEqual(['start stores', 'start browser', 'start runner', 'stop runner 250', 'stop browser 250', 'stop stores 250']);
  });

  it('stop the other steps when one fails, and log the one that failed', async () => {
    const done: string[] = [];
    const { log, errors } = errorLog();
    const steps = [...noted(['stores'], done), { name: 'the browser', stop: () => Promise.reject(new Error('gone')) }, ...noted(['runner'], done)];
    await stopSteps(steps, log, 0);
    expect(done).toEqual(['stop runner 0', 'stop stores 0']);
    expect(errors).toEqual(['stopping the browser failed']);
  });

  it('stop the start at the first step that fails, starting none after it', async () => {
    const done: string[] = [];
    const steps = [...noted(['stores'], done), { name: 'the browser', start: () => Promise.reject(new Error('no Chromium')) }, ...noted(['runner'], done)];
    await expect(startSteps(steps)).rejects.toThrow('no Chromium');
    expect(done).toEqual(['start stores']);
  });

  it('skip a step that has nothing to do at start or at stop', async () => {
    const done: string[] = [];
    const steps = [{ name: 'lock', stop: () => void done.push('release') }, { name: 'sweep', start: () => void done.push('sweep') }];
    await startSteps(steps);
    await stopSteps(steps, errorLog().log, 0);
    expect(done).toEqual(['sweep', 'release']);
  });
});

describe('ListenerList', () => {
  it('tells each event to every listener, in the order they subscribed', () => {
    const heard: string[] = [];
    const ends = new ListenerList<string>();
    ends.emit('before anyone listens');
    ends.subscribe((job) => heard.push(`metrics ${job}`));
    ends.subscribe((job) => heard.push(`waiters ${job}`));
    ends.emit('j1');
    expect(heard).toEqual(['metrics j1', 'waiters j1']);
  });
});
