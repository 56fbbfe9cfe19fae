import { describe, expect, it } from 'vitest';

import { createLogger, lineLogger, silentLogger, toLineLog } from '../server/logger.js';

function sink(isTTY?: boolean) {
  const lines: string[] = [];
  return { lines, destination: { isTTY, write: (chunk: string) => void lines.push(chunk) } };
}

describe('logger', () => {
  it('writes one JSON object per line with time, level, component, job id and message', () => {
    const out = sink(false);
    createLogger({ destination: out.destination }).child({ component: 'jobs' }).warn({ job_id: 'job_1', attempts: 2 }, 'browser crashed');
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0].endsWith('\n')).toBe(true);
    const record = JSON.parse(out.lines[0]);
    expect(record).toMatchObject({ level: 'warn', component: 'jobs', job_id: 'job_1', attempts: 2, msg: 'browser crashed' });
    expect(new Date(record.time).toISOString()).toBe(record.time);
  });

  it('writes a readable line on a terminal, with the stack of an error under it', () => {
    const out = sink(true);
    createLogger({ destination: out.destination }).child({ component: 'jobs', job_id: 'job_2' }).error({ err: new Error('boom') }, 'failed');
    expect(out.lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR \[jobs\] job_2: failed\nError: boom\n\s+at /);
  });

  it('drops lines below its level', () => {
    const out = sink(false);
    const log = createLogger({ level: 'warn', destination: out.destination });
    log.debug('one');
    log.info('two');
    log.error('three');
    expect(out.lines.map((line) => JSON.parse(line).msg)).toEqual(['three']);
  });

  it('masks fields named like a key, token, cookie or credential', () => {
    const out = sink(false);
    createLogger({ destination: out.destination }).info({ key: 'sa_live_1', headers: { authorization: 'Bearer t', cookie: 'sa_admin=x' } }, 'request');
    expect(out.lines[0]).not.toMatch(/sa_live_1|Bearer t|sa_admin=x/);
    expect(JSON.parse(out.lines[0]).headers).toEqual({ authorization: '[redacted]', cookie: '[redacted]' });
  });

  it('turns a logger into a line callback and a line callback into a logger', () => {
    const out = sink(false);
    toLineLog(createLogger({ destination: out.destination }), 'egress')('egress denied: 10.0.0.1');
    expect(JSON.parse(out.lines[0])).toMatchObject({ level: 'info', component: 'egress', msg: 'egress denied: 10.0.0.1' });
    const lines: string[] = [];
    lineLogger((line) => lines.push(line)).child({ component: 'stores' }).warn({ file: 'jobs.db' }, 'unreadable line');
    expect(lines).toEqual(['WARN  [stores] unreadable line file=jobs.db']);
  });

  it('has a silent logger that writes nothing and whose children are silent too', () => {
    expect(() => silentLogger.child({ component: 'x' }).error({ err: new Error('x') }, 'nothing')).not.toThrow();
  });
});
