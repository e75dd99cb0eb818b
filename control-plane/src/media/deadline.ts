/** The caller's signal, bounded by a deadline of our own; `timedOut` tells the two apart afterwards. */
export function withDeadline(signal: AbortSignal | undefined, timeoutMs: number): { signal: AbortSignal; timedOut: () => boolean } {
  const deadline = AbortSignal.timeout(timeoutMs);
  return { signal: signal ? AbortSignal.any([signal, deadline]) : deadline, timedOut: () => deadline.aborted };
}
