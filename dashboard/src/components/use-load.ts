import { useCallback, useEffect, useState } from 'react';
import { ApiProblem } from '../api/client.ts';

/** Loads something for a page once (and again when `key` changes or on reload()); failures as ApiProblem. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, key: string) {
  const [state, setState] = useState<{ data?: T; problem?: ApiProblem; loading: boolean }>({ loading: true });
  const [attempt, setAttempt] = useState(0);
  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  useEffect(() => {
    const abort = new AbortController();
    setState((previous) => ({ ...previous, loading: true }));
    load(abort.signal).then(
      (data) => !abort.signal.aborted && setState({ data, loading: false }),
      (error: unknown) => {
        if (abort.signal.aborted) return;
        const problem = error instanceof ApiProblem ? error : new ApiProblem('Something went wrong.', 'Reload the page and try again.', undefined, undefined);
        setState({ problem, loading: false });
      },
    );
    return () => abort.abort();
    // `load` is recreated on every render; `key` names what it loads.
  }, [key, attempt]);
  return { ...state, reload };
}
