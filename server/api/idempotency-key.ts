import { ValidationError } from '../domain-errors.js';

/** Longest Idempotency-Key accepted, characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * The request's Idempotency-Key, or undefined when it sent none. The draft makes the value a
 * Structured Field string (`"8e03978e-…"`); the bare value clients commonly send is taken too. A
 * key is 1 to 255 printable ASCII characters: anything else is a 400 naming the header.
 */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const raw = Array.isArray(header) ? header.join(', ') : header;
  const quoted = /^"((?:[^"\\]|\\["\\])*)"$/.exec(raw);
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : raw;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x20-\x7e]+$/.test(key)) {
    throw new ValidationError(`Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (a UUID, say)`, 'Idempotency-Key');
  }
  return key;
}
