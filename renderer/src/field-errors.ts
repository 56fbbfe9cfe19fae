import { ApiRequestError } from './api-client.js';

/**
 * Puts a 400 from the admin API next to the field its message names ("daily_limit must be…");
 * anything else goes to the form-level error line.
 */
export function routeApiError<F extends string>(
  err: unknown,
  fields: readonly F[],
): { field: F | null; message: string } {
  if (err instanceof ApiRequestError) {
    if (err.status === 400) {
      // Longest names first, so "monthly_limit" is not taken for a shorter name inside it.
      const byLength = [...fields].sort((a, b) => b.length - a.length);
      const field = byLength.find((f) => new RegExp(`\\b${f}\\b`).test(err.message)) ?? null;
      return { field, message: err.message };
    }
    return { field: null, message: err.message };
  }
  return { field: null, message: String(err) };
}
