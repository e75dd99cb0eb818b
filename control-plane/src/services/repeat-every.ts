/** A background loop: stopping it waits for the round in progress. */
export type RepeatingTask = { stop(): Promise<void> };

/**
 * Runs `round` now and then `intervalMs` after each round ends (rounds never overlap), until stopped.
 * A failed round is passed to `onError` and the loop goes on.
 */
export function repeatEvery(intervalMs: number, round: () => Promise<void>, onError: (error: unknown) => void): RepeatingTask {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const tick = () => {
    current = round()
      .catch(onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  tick();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
