/**
 * Runs the tasks of one key one at a time, in the order they came, while tasks of other keys
 * run alongside: a read-check-write (one account's counters, a result-cache lookup and its
 * insert) never interleaves with another of the same key inside this process.
 */
export class SerialByKey {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }
}
