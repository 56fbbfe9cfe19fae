import crypto from 'node:crypto';

import type { Clock } from '../time.js';
import { secretEquals, tokenFingerprint } from './admin-token.js';

/** How long a control-panel session lasts from sign-in, whatever its use. @default 12 hours */
export const SESSION_LIFETIME_MS = 12 * 3_600_000;
/** Sessions held at most; signing in past it ends the oldest. */
export const MAX_SESSIONS = 1000;

interface Session {
  /** Which admin token opened it: a session ends when the token is another. */
  token: string;
  expiresAt: number;
}

/**
 * The control panel's sessions: each a random id (256 bits) in the HttpOnly cookie, held here
 * by its SHA-256 (the id itself is never kept), ending at sign-out, after SESSION_LIFETIME_MS,
 * or once the admin token that opened it is no longer the token. In this process's memory:
 * a restart ends every session, and in a cluster a session holds on the node that opened it
 * only (sign out there; scripts use the bearer token, which every node accepts).
 */
export class AdminSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly clock: Clock,
    /** The admin token now; read at every check, so rotating it ends every session. */
    private readonly currentToken: () => string,
  ) {}

  /** A new session for the token now valid; answers its id, for the cookie. */
  open(): string {
    const now = this.clock.now();
    this.sweep(now);
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const id = crypto.randomBytes(32).toString('base64url');
    this.sessions.set(digest(id), { token: tokenFingerprint(this.currentToken()), expiresAt: now + SESSION_LIFETIME_MS });
    return id;
  }

  /** Whether `id` names a session that has not ended. */
  isOpen(id: string | undefined): boolean {
    if (!id) return false;
    const session = this.sessions.get(digest(id));
    if (!session) return false;
    if (session.expiresAt <= this.clock.now() || !secretEquals(session.token, tokenFingerprint(this.currentToken()))) {
      this.sessions.delete(digest(id));
      return false;
    }
    return true;
  }

  /** Ends the session `id` names (sign-out); nothing when there is none. */
  close(id: string | undefined): void {
    if (id) this.sessions.delete(digest(id));
  }

  /** Ends every session. */
  closeAll(): void {
    this.sessions.clear();
  }

  get size(): number {
    return this.sessions.size;
  }

  private sweep(now: number) {
    for (const [key, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(key);
  }
}

function digest(id: string): string {
  return crypto.createHash('sha256').update(id).digest('base64url');
}
