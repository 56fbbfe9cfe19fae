import { listen, type PageDriver } from './page-driver.js';

/** How far the main frame's current document has loaded. */
type Stage = 'committed' | 'domcontentloaded' | 'load';
const ORDER: Record<Stage, number> = { committed: 0, domcontentloaded: 1, load: 2 };

/**
 * Follows the documents of a page's main frame through CDP's Page events: how many it has
 * committed (a change means the page navigated, by script or a redirect after load) and how far
 * the current one has loaded. The page must be enabled (`Page.enable`) for the events to come.
 */
export class MainFrame {
  /** The frame's CDP id, known once the pipeline has asked for it (Page.getFrameTree). */
  id: string | undefined;
  /** Documents committed so far. */
  navigations = 0;
  /** A page starts on a blank document, loaded. */
  private stage: Stage = 'load';
  private readonly watchers = new Set<() => void>();
  private readonly detach: () => void;

  constructor(driver: PageDriver) {
    this.detach = listen(driver, {
      'Page.frameNavigated': ({ frame }) => {
        if (frame.parentId !== undefined) return;
        this.id = frame.id;
        this.navigations++;
        this.advance('committed', true);
      },
      'Page.domContentEventFired': () => this.advance('domcontentloaded'),
      'Page.loadEventFired': () => this.advance('load'),
    });
  }

  /** Whether the current document has reached `stage`. */
  reached(stage: Exclude<Stage, 'committed'>): boolean {
    return ORDER[this.stage] >= ORDER[stage];
  }

  /**
   * Resolves true once `condition` holds (checked now and after every event), or false after
   * `timeoutMs`; without a time-out it waits as long as the frame is watched.
   */
  until(condition: () => boolean, timeoutMs?: number): Promise<boolean> {
    if (condition()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (met: boolean) => {
        clearTimeout(timer);
        this.watchers.delete(check);
        resolve(met);
      };
      const check = () => condition() && done(true);
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => done(false), Math.max(0, timeoutMs));
      this.watchers.add(check);
    });
  }

  /** Resolves when the main frame next commits a document (never, if it does not). */
  async nextNavigation(): Promise<void> {
    const seen = this.navigations;
    await this.until(() => this.navigations !== seen);
  }

  dispose(): void {
    this.detach();
    this.watchers.clear();
  }

  private advance(stage: Stage, reset = false): void {
    if (reset || ORDER[stage] > ORDER[this.stage]) this.stage = stage;
    for (const check of [...this.watchers]) check();
  }
}
