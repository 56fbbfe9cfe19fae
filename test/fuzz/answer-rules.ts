import type { RawAnswer } from './raw-http.js';

/**
 * What every answer to bad input must respect: never a 5xx, and every error a JSON
 * `{error, message}` (plus `retry_after` on 429) with non-empty texts. Returns the
 * broken rules, empty when the answer is fine.
 */
export function brokenRules(answer: RawAnswer, method: string): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`answered ${answer.status}`);
  if (answer.status < 400 || method === 'HEAD') return problems;
  const type = answer.headers['content-type'] ?? '';
  if (!type.startsWith('application/json')) return [...problems, `error with content type "${type}": ${answer.body.toString().slice(0, 200)}`];
  let body: unknown;
  try {
    body = JSON.parse(answer.body.toString('utf8'));
  } catch {
    return [...problems, `error body is not JSON: ${answer.body.toString().slice(0, 200)}`];
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [...problems, 'error body is not an object'];
  const fields = body as Record<string, unknown>;
  const allowed = answer.status === 429 ? ['error', 'message', 'retry_after'] : ['error', 'message'];
  const extra = Object.keys(fields).filter((k) => !allowed.includes(k));
  if (extra.length) problems.push(`error body has extra fields ${extra.join(', ')}`);
  if (typeof fields.error !== 'string' || !fields.error) problems.push('error is not a non-empty string');
  if (typeof fields.message !== 'string' || !fields.message) problems.push('message is not a non-empty string');
  if (answer.status === 429 && !(Number.isInteger(fields.retry_after) && (fields.retry_after as number) >= 1)) {
    problems.push('429 without an integer retry_after ≥ 1');
  }
  return problems;
}
