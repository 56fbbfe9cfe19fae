import type { ApiRequestError } from '../api-client.js';

/** A failed load, with a way to try again. */
export function LoadError({ error, onRetry }: { error: ApiRequestError; onRetry: () => void }) {
  return (
    <div class="load-error" role="alert">
      <p>
        <strong>{error.title}.</strong> {error.message}
      </p>
      <button type="button" class="button" onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}
