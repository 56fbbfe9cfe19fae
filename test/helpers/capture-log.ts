import { createLogger, type Logger } from '../../server/logger.js';

/** One line as the logger wrote it, parsed. */
export type LogRecord = Record<string, any> & { level: string; msg: string };

export interface CapturedLog {
  /** A real logger (JSON lines, at debug level) whose output is kept here. */
  log: Logger;
  /** Each line exactly as written. */
  raw: string[];
  records: LogRecord[];
  /** The messages, for tests that only read the text. */
  messages(): string[];
}

/** A logger whose lines a test can read. */
export function captureLog(): CapturedLog {
  const raw: string[] = [];
  const records: LogRecord[] = [];
  const log = createLogger({
    level: 'debug',
    pretty: false,
    destination: {
      write(chunk: string) {
        raw.push(chunk);
        records.push(JSON.parse(chunk) as LogRecord);
      },
    },
  });
  return { log, raw, records, messages: () => records.map((r) => r.msg) };
}
