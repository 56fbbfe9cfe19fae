import { describe, expect, it } from 'vitest';

import { AdminSessions, MAX_SESSIONS, SESSION_LIFETIME_MS } from '../../server/auth/admin-sessions.js';

function sessions() {
  const state = { now: 1_000_000, token: 'a'.repeat(43) };
  return { state, sessions: new AdminSessions({ now: () => state.now }, () => state.token) };
}

describe('the control panel sessions', () => {
  it('gives each sign-in a random id and keeps none of them in clear', () => {
    const { sessions: s } = sessions();
    const ids = [s.open(), s.open(), s.open()];
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(s.isOpen(id)).toBe(true);
      expect(JSON.stringify([...(s as unknown as { sessions: Map<string, unknown> }).sessions])).not.toContain(id);
    }
    expect(s.isOpen(undefined)).toBe(false);
    expect(s.isOpen('')).toBe(false);
    expect(s.isOpen(`${ids[0]}x`)).toBe(false);
  });

  it('ends a session at sign-out, and leaves the others', () => {
    const { sessions: s } = sessions();
    const [a, b] = [s.open(), s.open()];
    s.close(a);
    expect(s.isOpen(a)).toBe(false);
    expect(s.isOpen(b)).toBe(true);
  });

  it('ends a session 12 hours after sign-in', () => {
    const { state, sessions: s } = sessions();
    const id = s.open();
    state.now += SESSION_LIFETIME_MS - 1;
    expect(s.isOpen(id)).toBe(true);
    state.now += 1;
    expect(s.isOpen(id)).toBe(false);
    expect(s.size).toBe(0);
  });

  it('ends every session once the admin token is another', () => {
    const { state, sessions: s } = sessions();
    const [a, b] = [s.open(), s.open()];
    state.token = 'b'.repeat(43);
    expect(s.isOpen(a)).toBe(false);
    expect(s.isOpen(b)).toBe(false);
    // Sessions opened under the new token hold.
    expect(s.isOpen(s.open())).toBe(true);
  });

  it('holds at most MAX_SESSIONS, ending the oldest first', () => {
    const { sessions: s } = sessions();
    const oldest = s.open();
    for (let i = 0; i < MAX_SESSIONS; i++) s.open();
    expect(s.size).toBe(MAX_SESSIONS);
    expect(s.isOpen(oldest)).toBe(false);
  });
});
