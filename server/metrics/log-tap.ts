import type { LogBindings, Logger, LogLevel, LogMethod } from '../logger.js';

/** One line as a component wrote it, with the bindings of the logger it wrote through. */
export interface LogEvent {
  level: LogLevel;
  /** The bindings of every child() between the tapped logger and the writer (`component`, `job_id`…). */
  bindings: LogBindings;
  fields: Record<string, unknown>;
  msg: string;
}

/**
 * A Logger that hands every call to `listener` before passing it on, whatever the level the
 * log keeps. The engine and the egress proxy report what they do (a relaunch, a kill, a
 * denial) through their Logger; the metrics count those lines here instead of the components
 * carrying a second reporting channel.
 */
export function tapLogger(log: Logger, listener: (event: LogEvent) => void, bindings: LogBindings = {}): Logger {
  const at =
    (level: LogLevel): LogMethod =>
    (first: string | Record<string, unknown>, msg?: string) => {
      const fields = typeof first === 'string' ? {} : first;
      const text = typeof first === 'string' ? first : msg ?? '';
      try {
        listener({ level, bindings, fields, msg: text });
      } catch {
        // Counting must never break the line it counts.
      }
      if (typeof first === 'string') log[level](first);
      else log[level](first, msg);
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => tapLogger(log.child(more), listener, { ...bindings, ...more }),
  };
}
