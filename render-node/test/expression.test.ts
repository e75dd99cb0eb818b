import { describe, expect, it } from 'vitest';
import { eyeNarrowing } from '../src/expression.ts';

const FPS = 25;
/** A mouth track: `open` for each [from, to) second span, closed elsewhere. */
function track(seconds: number, notes: Array<[number, number, number]>): Float32Array {
  const open = new Float32Array(seconds * FPS);
  for (const [from, to, level] of notes) for (let f = Math.round(from * FPS); f < Math.round(to * FPS); f++) open[f] = level;
  return open;
}

describe('the eyes narrow on long loud notes', () => {
  it('stay open in silence, on short syllables and on quiet notes', () => {
    const syllables = track(6, Array.from({ length: 12 }, (_, i): [number, number, number] => [i * 0.5, i * 0.5 + 0.25, 1]));
    expect(Math.max(...eyeNarrowing(track(4, []), FPS))).toBe(0);
    expect(Math.max(...eyeNarrowing(syllables, FPS))).toBe(0);
    expect(Math.max(...eyeNarrowing(track(4, [[0.5, 3, 0.3]]), FPS))).toBe(0);
  });

  it('narrow a held loud note to about a third of the eye, and open again after it', () => {
    const narrowing = eyeNarrowing(track(5, [[0.5, 3, 0.9]]), FPS);
    expect(narrowing[Math.round(0.6 * FPS)]).toBe(0);
    expect(narrowing[Math.round(2.8 * FPS)]).toBeCloseTo(0.35, 2);
    expect(narrowing[Math.round(4 * FPS)]).toBe(0);
  });
});
