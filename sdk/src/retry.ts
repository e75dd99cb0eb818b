import { PetsingError } from './errors.ts';

export type RetryPolicy = {
  /** Retries after the first attempt (0 turns retrying off). */
  maxRetries: number;
  /** The first back-off; each further retry doubles it (with jitter) up to maxDelayMs. */
  baseDelayMs: number;
  /** The longest single wait, Retry-After included: a service asking for longer gets its answer returned instead. */
  maxDelayMs: number;
};

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, baseDelayMs: 500, maxDelayMs: 60_000 };

// Sent again after a lost connection only when the server cannot act twice on it.
const REPLAY_SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * A fetch that sends a request again while the service answers a retryable error (ErrorDetail `retryable`,
 * after `Retry-After` when given, else after an exponential back-off), and after a lost connection when the
 * request is safe to replay: a read, or a create carrying an Idempotency-Key (the same key every attempt, so
 * the service answers the first create again instead of charging twice).
 */
export function retryingFetch(send: typeof fetch, policy: RetryPolicy): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= policy.maxRetries;
      const sent = last ? request : request.clone();
      let response: Response;
      try {
        response = await send(sent);
      } catch (error) {
        if (last || request.signal.aborted || !replaySafe(request)) throw error;
        await sleep(backoff(policy, attempt), request.signal);
        continue;
      }
      if (response.ok || last) return response;
      const text = await response.clone().text().catch(() => '');
      const problem = PetsingError.of(response, text);
      if (!problem.retryable) return response;
      const delay = problem.retryAfterSeconds !== undefined ? problem.retryAfterSeconds * 1000 : backoff(policy, attempt);
      if (delay > policy.maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}

function replaySafe(request: Request): boolean {
  return REPLAY_SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key');
}

function backoff(policy: RetryPolicy, attempt: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Waits, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
