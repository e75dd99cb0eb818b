import { describe, expect, it } from 'vitest';
import { bestSingingWindow, type VocalActivity } from '../src/audio/index.ts';

/** A vocal activity of `seconds` at 100 hops a second, singing over `spans` ([from, to) seconds). */
function activity(seconds: number, spans: [number, number][]): VocalActivity {
  const rate = 100;
  const active = new Uint8Array(seconds * rate);
  for (const [from, to] of spans) active.fill(1, from * rate, to * rate);
  return { rate, active, found: spans.length > 0, phraseStarts: spans.map(([from]) => from) };
}

describe('the best 30 seconds of a soundtrack', () => {
  it('starts just before the phrase whose 30 s hold the most singing', () => {
    const window = bestSingingWindow(activity(90, [[5, 9], [40, 52], [55, 68], [80, 84]]), 90, 30);
    expect(window.startSeconds).toBeCloseTo(39.8, 5);
    expect(window.durationSeconds).toBe(30);
    expect(window.voicedSeconds).toBeCloseTo(25, 5);
  });

  it('ends with the source when the most singing is too near its end for a window from a phrase', () => {
    expect(bestSingingWindow(activity(50, [[2, 4], [40, 49]]), 50, 30)).toMatchObject({ startSeconds: 20, voicedSeconds: 9 });
  });

  it('keeps a source no longer than a window whole, and begins at the start without a voice', () => {
    expect(bestSingingWindow(activity(20, [[12, 18]]), 20, 30)).toMatchObject({ startSeconds: 0, durationSeconds: 20, voicedSeconds: 6 });
    expect(bestSingingWindow(activity(90, []), 90, 30)).toMatchObject({ startSeconds: 0, durationSeconds: 30, voicedSeconds: 0 });
  });
});
