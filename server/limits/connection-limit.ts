import type { Socket } from 'node:net';

import { isAllowed, normalizeAddress } from '../ip-whitelist.js';

/**
 * Open connections per client address. A client past `max` is still accepted (so it can be
 * told why) but marked refused: its request is answered 429 and the connection closed. Sockets
 * from `exempt` ranges (trusted proxies, which carry many clients' connections) are not
 * counted. An address is counted by `keyOf` (IPv6 clients by their /64).
 */
export class ConnectionLimit {
  private readonly open = new Map<string, number>();
  private readonly refused = new WeakSet<Socket>();

  constructor(
    readonly max: number,
    private readonly exempt: readonly string[],
    private readonly keyOf: (address: string) => string,
  ) {}

  /** Counts a new connection until it closes; answers false (and remembers) when it is one too many. */
  admit(socket: Socket): boolean {
    const address = normalizeAddress(socket.remoteAddress ?? '');
    if (this.exempt.length && isAllowed(this.exempt, address)) return true;
    const key = this.keyOf(address);
    const count = this.open.get(key) ?? 0;
    if (count >= this.max) {
      this.refused.add(socket);
      return false;
    }
    this.open.set(key, count + 1);
    socket.once('close', () => {
      const left = (this.open.get(key) ?? 1) - 1;
      if (left > 0) this.open.set(key, left);
      else this.open.delete(key);
    });
    return true;
  }

  /** Whether `socket` was refused by admit. */
  isRefused(socket: Socket): boolean {
    return this.refused.has(socket);
  }

  /** Open connections counted for `address`. */
  count(address: string): number {
    return this.open.get(this.keyOf(normalizeAddress(address))) ?? 0;
  }
}
