/**
 * One lock per login, held from acquire() until its release is called: the capture told to sign
 * in holds it until it has a session (or failed), and the captures asking meanwhile wait for it.
 */
export class LoginLocks {
  private readonly tails = new Map<string, Promise<void>>();

  /** Resolves, once the lock is free, to the function that releases it. */
  async acquire(id: string): Promise<() => void> {
    const previous = this.tails.get(id) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => (release = resolve));
    this.tails.set(id, tail);
    void tail.then(() => {
      if (this.tails.get(id) === tail) this.tails.delete(id);
    });
    await previous;
    return release;
  }

  /** Runs `task` holding the lock. */
  async run<T>(id: string, task: () => Promise<T>): Promise<T> {
    const release = await this.acquire(id);
    try {
      return await task();
    } finally {
      release();
    }
  }
}
