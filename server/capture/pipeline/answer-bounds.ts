import { CaptureError } from '../capture-errors.js';

// How much of what a page controls may cross from the browser to this process. A page is hostile
// input: its source, console, exceptions, title, pictures and what a script reads from it are
// measured or cut in the page, or streamed, before they cross; whatever still arrives too large
// fails its capture, saying so, and never the process (PipeGuard is the bound behind all of them).

/**
 * Largest DevTools message the browser may send to this process, in bytes. playwright reads the
 * browser's pipe and joins each whole message into one string with no bound of its own; a message
 * past V8's longest string (2^29 − 24 characters, about 512 MiB) throws in the pipe's `data`
 * listener, an exception no code can catch, and the process exits. JSON's escapes multiply a
 * page's characters by up to six. Half that longest string leaves room for playwright's own
 * copies; no page the appliance should capture comes near it (a 150 M pixel picture of flat
 * colours is tens of MiB of PNG).
 */
export const DEVTOOLS_MESSAGE_MAX_BYTES = 256 * 2 ** 20;

/**
 * Largest answer a script run in the page (evaluate) may return, in characters of its JSON,
 * counted in the page before it is returned. The largest the pipeline asks for is `extract`'s
 * Markdown and text (MAX_CONTENT_BYTES each, 5 MiB), which JSON may escape to six times that.
 */
export const EVALUATE_ANSWER_MAX_CHARS = 64 * 2 ** 20;

/** Starts the text of the error that stands for an answer over the limit (PipeGuard, checkAnswerSize). */
export const OVERSIZED_ANSWER = 'The browser answered with a message over the limit';

/** What the page made too large to be read, by the DevTools command that would have read it. */
const WHAT: Record<string, string> = {
  'DOM.getOuterHTML': 'its source',
  'Page.captureScreenshot': 'its picture',
  'Page.printToPDF': 'its PDF',
  'IO.read': 'its PDF',
  'Runtime.evaluate': 'what a script read from it',
};

/**
 * A capture whose page made the browser's answer to `method` longer than the appliance reads:
 * the job fails saying so; the browser and every other capture go on.
 */
export function answerTooLarge(method: string): CaptureError {
  const what = WHAT[method] ?? `the browser's answer to ${method}`;
  return new CaptureError(`The page made ${what} larger than the appliance reads (${DEVTOOLS_MESSAGE_MAX_BYTES / 2 ** 20} MiB)`);
}

/** Whether `err` is the browser's refusal of an answer over the limit (PipeGuard, checkAnswerSize). */
export function isOversizedAnswer(err: unknown): boolean {
  return String(err).includes(OVERSIZED_ANSWER);
}

/**
 * Runs in the page (so it is self-contained): throws when `value`'s JSON would be longer than
 * `maxChars`, counting every character as the six an escape may take. It walks the value
 * without calling the page's JSON.stringify or toJSON (which a page may have replaced), and
 * stops as soon as the count passes the bound.
 */
export function checkAnswerSize(value: unknown, maxChars: number, oversized: string): void {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') size += item.length * 6 + 2;
    else if (item !== null && typeof item === 'object') {
      const keys = Object.keys(item);
      size += 2 + keys.length;
      for (const key of keys) {
        size += key.length * 6 + 3;
        stack.push((item as Record<string, unknown>)[key]);
      }
    } else size += 24;
    if (size > maxChars) throw new Error(`${oversized}: a script's answer of more than ${maxChars} characters`);
  }
}
