import { useCallback, useEffect, useEffectEvent, useState } from 'react';
import { ApiProblem } from '../api/client.ts';

/**
 * Loads something for a page once (and again when `key` changes or on reload()); failures as ApiProblem.
 * While a new load runs, the last answer stays shown (`loading` says a newer one is on its way).
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, key: string) {
  const [attempt, setAttempt] = useState(0);
  const request = `${key}\n${attempt}`;
  const [state, setState] = useState<{ answered?: string; data?: T; problem?: ApiProblem }>({});
  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  // `load` is a new function on every render; `key` names what it loads.
  const start = useEffectEvent((signal: AbortSignal) => load(signal));
  useEffect(() => {
    const abort = new AbortController();
    start(abort.signal).then(
      (data) => !abort.signal.aborted && setState({ answered: request, data }),
      (error: unknown) => {
        if (abort.signal.aborted) return;
        const problem = error instanceof ApiProblem ? error : new ApiProblem('Something went wrong.', 'Reload the page and try again.', undefined, undefined);
        setState({ answered: request, problem });
      },
    );
    return () => abort.abort();
  }, [request]);
  return { data: state.data, problem: state.problem, loading: state.answered !== request, reload };
}
