/** Longest text of one console argument that leaves the page, in characters. */
export const CONSOLE_ARGUMENT_MAX_CHARS = 4096;

/**
 * Runs in every document before its own scripts (so it is self-contained): the console's
 * methods cut what they are given before the browser reports it. Chromium sends a console call's
 * arguments whole to every DevTools session (a string's every character, an error's whole
 * stack, a function's whole source), and a page decides their size: one `console.error` of
 * 100 MiB is a message of 600 MiB once escaped. Strings are cut; an object is passed on as the
 * start of its text, with the page's own toString. A page that reaches a console this did not
 * wrap (a frame made before it ran) meets PipeGuard instead.
 */
export function cutConsoleArguments(maxChars: number): void {
  const cut = (text: string) => (text.length > maxChars ? `${text.slice(0, maxChars)}…` : text);
  const shown = (value: unknown): unknown => {
    if (typeof value === 'string') return cut(value);
    if (value === null || typeof value !== 'object') return typeof value === 'function' ? '[function]' : value;
    try {
      return cut(value instanceof Error ? String(value.stack ?? value) : String(value));
    } catch {
      return '[object]';
    }
  };
  const methods = ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'dirxml', 'table', 'group', 'groupCollapsed', 'assert', 'count', 'timeLog', 'timeEnd', 'time', 'countReset'] as const;
  for (const name of methods) {
    const original = console[name] as (...args: unknown[]) => void;
    if (typeof original !== 'function') continue;
    const wrapped = function (this: unknown, ...args: unknown[]) {
      return original.apply(this, args.map(shown));
    };
    Object.defineProperty(console, name, { value: wrapped, writable: true, configurable: true });
  }
}
