/**
 * The service's log: levelled, structured lines (pino).
 *
 * How a component takes it: a `log: Logger` in its deps (or constructor options), narrowed
 * once with `deps.log.child({ component: 'jobs' })`; a line about one job adds
 * `.child({ job_id })` or passes `{ job_id }` as the first argument. An error goes in as
 * `{ err }` so its stack is kept out of the message. Only the entry points create a logger
 * (`createLogger`); tests pass `silentLogger`.
 *
 * Off a terminal every line is one JSON object with `time`, `level`, `component`, `job_id`
 * (when there is one) and `msg`; on a terminal a readable line. Never put a key, admin token,
 * cookie or credential in a line: the fields named in REDACTED are masked as a safety net,
 * not as permission.
 */
import { type Logger as PinoLogger,pino, stdTimeFunctions } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Fields every line of a child logger carries. */
export interface LogBindings {
  /** The part of the service speaking, e.g. `jobs`, `webhooks`, `http`. */
  component?: string;
  job_id?: string;
  [field: string]: unknown;
}

export interface LogMethod {
  (msg: string): void;
  (fields: Record<string, unknown>, msg?: string): void;
}

export interface Logger {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  child(bindings: LogBindings): Logger;
}

/** A line callback, as older components take it. */
export type LineLog = (line: string) => void;

export interface LoggerOptions {
  /** Lines below this level are dropped. @default 'info' */
  level?: LogLevel | 'silent';
  /** Readable lines instead of JSON. @default whether `destination` (stdout) is a terminal */
  pretty?: boolean;
  /** Where lines go. @default process.stdout */
  destination?: { write(chunk: string): unknown; isTTY?: boolean };
}

/** Field names whose values never reach a line, at the top level or one object down. */
const REDACTED = ['key', 'api_key', 'token', 'admin_token', 'authorization', 'cookie', 'password', 'secret'];

export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? process.stdout;
  const pretty = options.pretty ?? destination.isTTY === true;
  const out = pretty ? { write: (chunk: string) => destination.write(readableLine(chunk)) } : destination;
  return wrap(
    pino(
      {
        level: options.level ?? 'info',
        base: undefined,
        timestamp: stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
        redact: { paths: [...REDACTED, ...REDACTED.map((name) => `*.${name}`)], censor: '[redacted]' },
      },
      out,
    ),
  );
}

/** Drops every line; for tests and tools that have nowhere to log. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};

/**
 * A Logger over a line callback (the desktop shell's log file, older tests): each line is
 * `LEVEL [component] message`, with the other fields appended as key=value.
 */
export function lineLogger(write: LineLog, bindings: LogBindings = {}): Logger {
  const at =
    (level: LogLevel): LogMethod =>
    (first: string | Record<string, unknown>, msg?: string) => {
      const fields = typeof first === 'string' ? {} : first;
      const text = typeof first === 'string' ? first : msg ?? '';
      write(formatLine({ level, ...bindings, ...fields, msg: text }, false));
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => lineLogger(write, { ...bindings, ...more }),
  };
}

/** A line callback over a Logger, for components that still take one. */
export function toLineLog(log: Logger, component: string): LineLog {
  const child = log.child({ component });
  return (line) => child.info(line);
}

function wrap(logger: PinoLogger): Logger {
  const at =
    (level: LogLevel): LogMethod =>
    (first: string | Record<string, unknown>, msg?: string) => {
      if (typeof first === 'string') logger[level](first);
      else logger[level](first, msg);
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (bindings) => wrap(logger.child(bindings)),
  };
}

/** pino's JSON line as one readable line: `12:00:00.000 INFO  [jobs] job_x: message key=value`. */
function readableLine(chunk: string): string {
  try {
    return `${formatLine(JSON.parse(chunk) as Record<string, unknown>, true)}\n`;
  } catch {
    return chunk;
  }
}

function formatLine(record: Record<string, unknown>, withTime: boolean): string {
  const { time, level, component, job_id, msg, err, ...rest } = record;
  const parts: string[] = [];
  if (withTime && typeof time === 'string') parts.push(time.slice(11, 23));
  parts.push(String(level).toUpperCase().padEnd(5));
  if (component) parts.push(`[${String(component)}]`);
  parts.push(job_id ? `${String(job_id)}: ${String(msg ?? '')}` : String(msg ?? ''));
  for (const [name, value] of Object.entries(rest)) {
    parts.push(`${name}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  const error = err as { stack?: string; message?: string } | undefined;
  const stack = error && typeof error === 'object' ? error.stack ?? error.message : err === undefined ? undefined : String(err);
  return stack ? `${parts.join(' ')}\n${stack}` : parts.join(' ');
}
