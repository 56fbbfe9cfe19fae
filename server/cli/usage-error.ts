import fs from 'node:fs/promises';

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

/** Most a JSON file given to a command may hold (a storageState with many cookies stays far below). */
const MAX_JSON_INPUT_BYTES = 1024 * 1024;

/**
 * The JSON object in `file` (`-`: standard input), for a command that sends what a person must
 * not type on a command line (a password, a session). A UsageError names the flag when it cannot
 * be read or is not a JSON object.
 */
export async function jsonObjectFrom(flag: string, file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--${flag} ${file} cannot be read: ${(err as Error).message}`);
  }
  if (Buffer.byteLength(text) > MAX_JSON_INPUT_BYTES) throw new UsageError(`--${flag} ${file} holds more than ${MAX_JSON_INPUT_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--${flag} ${file} is not JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`--${flag} ${file} must hold a JSON object`);
  return value as Record<string, unknown>;
}

async function readStdin(): Promise<string> {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk as string;
  return text;
}
