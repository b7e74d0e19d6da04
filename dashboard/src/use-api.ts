import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads `load()` whenever `key` changes (the path, filters and mode that determine it), and
 * keeps the previous data on screen meanwhile; an answer that arrives after a newer request
 * started is dropped.
 */
export function useApi<T>(key: string | null, load: () => Promise<T>): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: key !== null });
  const [attempt, setAttempt] = useState(0);
  // Runs when `key` changes: it names everything `load` depends on.
  useEffect(() => {
    if (key === null) return;
    let current = true;
    setState((s) => ({ ...s, loading: true, error: undefined }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) =>
        current &&
        setState((s) => ({
          data: s.data,
          loading: false,
          error: error instanceof ApiError ? error : new ApiError(0, 'client_error', String(error)),
        })),
    );
    return () => {
      current = false;
    };
  }, [key, attempt]);
  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}
