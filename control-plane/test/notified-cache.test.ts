import { describe, expect, it } from 'vitest';
import { NotifiedCache, type Listen } from '../src/services/notified-cache.ts';

/** A NOTIFY channel in memory: `notify` delivers a payload, `gap` reports the subscription dropping or coming back. */
function channel() {
  let deliver: (payload: string) => void = () => {};
  let report: (listening: boolean) => void = () => {};
  const listen: Listen = async (_channel, onMessage, onGap) => {
    deliver = onMessage;
    report = onGap ?? (() => {});
    return async () => {};
  };
  return { listen, notify: (payload: string) => deliver(payload), gap: (listening: boolean) => report(listening) };
}

describe('NotifiedCache', () => {
  it('keeps nothing until it follows its channel, then forgets what a notification names', async () => {
    const cache = new NotifiedCache<string>(60_000);
    cache.put('a', 'first', cache.mark());
    expect(cache.get('a')).toBeUndefined();

    const { listen, notify } = channel();
    await cache.follow(listen, 'changes', (payload) => [payload]);
    cache.put('a', 'first', cache.mark());
    cache.put('b', 'second', cache.mark());
    expect(cache.get('a')).toBe('first');
    notify('a');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBe('second');
  });

  it('does not store a read that began before a change was announced', async () => {
    const cache = new NotifiedCache<string>(60_000);
    const { listen, notify } = channel();
    await cache.follow(listen, 'changes', (payload) => [payload]);
    const mark = cache.mark();
    notify('a'); // committed while the read was under way: what it found may be the old row
    cache.put('a', 'old', mark);
    expect(cache.get('a')).toBeUndefined();
  });

  it('forgets everything and keeps nothing while its subscription is down, and caches again once it is back', async () => {
    const cache = new NotifiedCache<string>(60_000);
    const { listen, gap } = channel();
    await cache.follow(listen, 'changes', (payload) => [payload]);
    cache.put('a', 'kept', cache.mark());
    gap(false);
    expect(cache.get('a')).toBeUndefined();
    cache.put('a', 'unsure', cache.mark());
    expect(cache.get('a')).toBeUndefined();
    gap(true);
    cache.put('a', 'again', cache.mark());
    expect(cache.get('a')).toBe('again');
  });

  it('lets an entry live at most the TTL, and never past its own expiry', async () => {
    let now = 1_000;
    const cache = new NotifiedCache<string>(5_000, () => now);
    await cache.follow(channel().listen, 'changes', (payload) => [payload]);
    cache.put('a', 'short', cache.mark(), new Date(now + 1_000));
    cache.put('b', 'long', cache.mark());
    now += 1_000;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBe('long');
    now += 4_000;
    expect(cache.get('b')).toBeUndefined();
  });
});
