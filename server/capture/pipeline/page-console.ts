import { CONSOLE_ARGUMENT_MAX_CHARS, cutConsoleArguments } from '../in-page/console-cut.js';
import type { MainFrame } from './main-frame.js';
import { listen, type PageDriver } from './page-driver.js';

/** The longest first message a console_errors warning quotes, in characters. */
const QUOTE_MAX = 200;

/**
 * Counts the errors a page reports to its console, through CDP's Runtime events: `console.error`
 * and failed `console.assert` calls, and exceptions no script caught. Only those of the document
 * finally shown count (a page that moved on by script left its earlier document's behind).
 * `start()` turns the events on (Runtime.enable); they come from then on.
 */
export class PageConsole {
  /** By document (MainFrame.navigations when it was shown): a count and the first text, so a page that logs endlessly costs no memory. */
  private readonly errors = new Map<number, { count: number; first: string }>();
  private readonly detach: () => void;

  constructor(
    private readonly driver: PageDriver,
    private readonly frame: MainFrame,
  ) {
    this.detach = listen(driver, {
      'Runtime.consoleAPICalled': ({ type, args }) => {
        if (type !== 'error' && type !== 'assert') return;
        this.note(args.map((arg) => (arg.value !== undefined ? String(arg.value) : (arg.description ?? ''))).join(' '));
      },
      'Runtime.exceptionThrown': ({ exceptionDetails }) => {
        this.note(exceptionDetails.exception?.description?.split('\n')[0] ?? exceptionDetails.text);
      },
    });
  }

  /**
   * Cuts the console's arguments in every document from now on (cutConsoleArguments), then
   * turns the events on. Without the events the page's errors go uncounted; that never fails
   * the capture.
   */
  async start(): Promise<void> {
    await this.driver.send('Page.addScriptToEvaluateOnNewDocument', {
      source: `(${cutConsoleArguments.toString()})(${CONSOLE_ARGUMENT_MAX_CHARS})`,
    });
    await this.driver.send('Runtime.enable', {}).catch(() => undefined);
  }

  /** The errors of the document shown now: how many, and the first one's text (shortened). */
  errorsOfDocument(): { count: number; first: string | null } {
    const ours = this.errors.get(this.frame.navigations);
    if (!ours) return { count: 0, first: null };
    return { count: ours.count, first: ours.first.length > QUOTE_MAX ? `${ours.first.slice(0, QUOTE_MAX)}…` : ours.first };
  }

  dispose(): void {
    this.detach();
  }

  private note(text: string): void {
    const seen = this.errors.get(this.frame.navigations);
    if (seen) seen.count++;
    else this.errors.set(this.frame.navigations, { count: 1, first: text.trim() });
  }
}
