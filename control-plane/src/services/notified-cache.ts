/** Subscribes to a NOTIFY channel; resolves to an unsubscribe function (DatabaseHandle.listen). */
export type Listen = (channel: string, onMessage: (payload: string) => void, onGap?: (listening: boolean) => void) => Promise<() => Promise<void>>;

/** Enough for every active key or polled video of a large deployment; past it the oldest entries go first. */
const MAX_ENTRIES = 10_000;

/** Values that are good until a time of their own; bounded, the oldest going first. */
export class ExpiringCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();

  constructor(readonly now: () => number = Date.now) {}

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > this.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: T, until: number): void {
    if (this.entries.size >= MAX_ENTRIES && !this.entries.has(key)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

/**
 * What this process read from the database, kept while the database says nothing changed: every change is
 * announced on a NOTIFY channel (by a trigger, so a change made by any process or by hand in SQL counts) and
 * forgets the entry in every replica. The cache holds nothing until it follows its channel, and forgets
 * everything whenever the subscription drops, until it is back; an entry also lives at most `ttlMs`, which
 * bounds what a silently lost notification could leave behind.
 */
export class NotifiedCache<T> {
  private readonly entries: ExpiringCache<T>;
  /** Bumped by every forget, so a read that started before a change does not store what it found. */
  private generation = 0;
  private following = false;

  constructor(
    private readonly ttlMs: number,
    now?: () => number,
  ) {
    this.entries = new ExpiringCache(now);
  }

  /** Forgets the keys each notification on `channel` names (`keysOf` its payload) from now until unsubscribed. */
  async follow(listen: Listen, channel: string, keysOf: (payload: string) => readonly string[]): Promise<() => Promise<void>> {
    const unsubscribe = await listen(channel, (payload) => this.forget(keysOf(payload)), (listening) => {
      this.following = listening;
      this.forgetAll();
    });
    // A read that began before the LISTEN was in place may have missed a change: its mark is now stale.
    this.forgetAll();
    this.following = true;
    return async () => {
      this.following = false;
      this.forgetAll();
      await unsubscribe();
    };
  }

  get(key: string): T | undefined {
    return this.entries.get(key);
  }

  /** What a read must hand back to `put`: the generation it started in. */
  mark(): number {
    return this.generation;
  }

  /** Keeps `value` unless something was forgotten since `mark` was taken; never past `expiresAt`. */
  put(key: string, value: T, mark: number, expiresAt?: Date): void {
    if (this.ttlMs <= 0 || !this.following || mark !== this.generation) return;
    this.entries.set(key, value, Math.min(this.entries.now() + this.ttlMs, expiresAt?.getTime() ?? Number.POSITIVE_INFINITY));
  }

  forget(keys: readonly string[]): void {
    this.generation += 1;
    for (const key of keys) this.entries.delete(key);
  }

  private forgetAll(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
