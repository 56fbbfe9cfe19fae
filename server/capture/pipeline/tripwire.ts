/**
 * A failure that can happen at any point of a capture (the browser disconnecting, the page
 * crashing, the caller aborting). Every awaited step is raced against it, so the capture stops
 * at once instead of waiting for the step's own time-out.
 */
export class Tripwire {
  private failure: { error: unknown } | undefined;
  private fail!: (error: unknown) => void;
  private readonly tripped: Promise<never>;

  constructor() {
    this.tripped = new Promise<never>((_, reject) => {
      this.fail = reject;
    });
    this.tripped.catch(() => undefined);
  }

  /** Records the first failure; later ones are ignored. */
  trip(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    this.fail(error);
  }

  /** The first failure, when there was one. */
  get error(): { error: unknown } | undefined {
    return this.failure;
  }

  /**
   * Trips with the signal's reason when it aborts (at once if it has); returns a function that
   * stops watching, for when the capture is over.
   */
  watch(signal: AbortSignal | undefined): () => void {
    if (!signal) return () => undefined;
    const onAbort = () => this.trip(signal.reason ?? new Error('The capture was aborted'));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  }

  /** `work`, unless the wire trips first. */
  race<T>(work: Promise<T>): Promise<T> {
    work.catch(() => undefined);
    return Promise.race([work, this.tripped]);
  }
}
