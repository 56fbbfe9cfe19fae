/** A mistake in the command line or in what it asked for: printed as `error: …`, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A whole number from a flag, or undefined when the flag is absent. */
export function wholeNumber(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(n) || n < 0) throw new UsageError(`--${flag} must be a whole number, got "${raw}"`);
  return n;
}

/** Commander's collector for a flag given several times. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
