/**
 * The listeners of one kind of event, told in the order they subscribed. What is built first
 * emits; what is built later subscribes, so no callback reaches for an object not built yet.
 */
export class ListenerList<T> {
  private readonly listeners: Array<(event: T) => void> = [];

  subscribe(listener: (event: T) => void): void {
    this.listeners.push(listener);
  }

  emit(event: T): void {
    for (const listener of this.listeners) listener(event);
  }
}
