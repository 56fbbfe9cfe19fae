import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

import { ApiRequestError } from './api-client.js';

export interface Resource<T> {
  data: T | undefined;
  error: ApiRequestError | undefined;
  loading: boolean;
  /** Loads again; the current data stays on screen meanwhile. */
  reload: () => Promise<void>;
  setData: (update: (current: T | undefined) => T | undefined) => void;
}

/**
 * Loads data for a page and keeps it fresh. `refreshMs` may depend on the data (poll quickly while
 * jobs run, slowly otherwise); null stops polling. A load still running when the inputs change or
 * the page goes away is aborted, so an old answer never overwrites a newer one.
 */
export function useResource<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: readonly unknown[],
  refreshMs?: (data: T | undefined) => number | null,
): Resource<T> {
  const [data, setDataState] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiRequestError | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  // Bumped after every answer (or skipped poll) to arm the next poll.
  const [tick, setTick] = useState(0);
  const inFlight = useRef<AbortController | null>(null);
  const dataRef = useRef<T | undefined>(undefined);
  const loadRef = useRef(load);
  loadRef.current = load;

  const run = useCallback(async () => {
    inFlight.current?.abort();
    const controller = new AbortController();
    inFlight.current = controller;
    try {
      const next = await loadRef.current(controller.signal);
      if (controller.signal.aborted) return;
      dataRef.current = next;
      setDataState(() => next);
      setError(undefined);
    } catch (err) {
      if (controller.signal.aborted) return;
      setError(err instanceof ApiRequestError ? err : new ApiRequestError(0, 'Error', String(err)));
    } finally {
      if (inFlight.current === controller) {
        inFlight.current = null;
        setLoading(false);
        setTick((t) => t + 1);
      }
    }
  }, []);

  useEffect(() => {
    setLoading(true);
    dataRef.current = undefined;
    setDataState(() => undefined);
    void run();
    return () => inFlight.current?.abort();
  }, deps);

  // Polling: one timer at a time, re-armed after each answer so slow servers are not piled on.
  const refreshRef = useRef(refreshMs);
  refreshRef.current = refreshMs;
  useEffect(() => {
    if (!refreshRef.current || loading) return;
    const ms = refreshRef.current(dataRef.current);
    if (ms === null) return;
    const timer = setTimeout(() => {
      // Nobody looks at a hidden page: skip this poll and arm the next one.
      if (document.visibilityState === 'hidden') setTick((t) => t + 1);
      else void run();
    }, ms);
    return () => clearTimeout(timer);
  }, [tick, loading, run]);

  const setData = useCallback((update: (current: T | undefined) => T | undefined) => {
    setDataState((current) => {
      const next = update(current);
      dataRef.current = next;
      return next;
    });
  }, []);

  return { data, error, loading, reload: run, setData };
}
