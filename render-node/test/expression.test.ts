import { describe, expect, it } from 'vitest';
import { browLift, eyeNarrowing, phrasesOf } from '../src/expression.ts';
import { breaths, headTilt } from '../src/head-performance.ts';

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

/** A pitch track (100 hops a second): `hz` over each [from, to) second span, no pitch elsewhere. */
function pitch(seconds: number, notes: Array<[number, number, number]>): { rate: number; f0: Float32Array } {
  const f0 = new Float32Array(seconds * 100);
  for (const [from, to, hz] of notes) f0.fill(hz, Math.round(from * 100), Math.round(to * 100));
  return { rate: 100, f0 };
}

describe('the face performs with the phrases', () => {
  // Two phrases: 0.5-2.5 s and 3.5-5 s (a second's pause), each of syllables with short gaps between them.
  const syllables = (from: number, to: number): Array<[number, number, number]> =>
    Array.from({ length: Math.floor((to - from) / 0.3) }, (_, i): [number, number, number] => [from + i * 0.3, from + i * 0.3 + 0.2, 0.8]);
  const open = track(6, [...syllables(0.5, 2.5), ...syllables(3.5, 5)]);
  const phrases = phrasesOf(open, FPS);
  const sung = (f: number) => phrases.some(([start, end]) => f >= start && f < end);

  it('finds the phrases across the gaps between syllables', () => {
    expect(phrases).toEqual([[Math.round(0.5 * FPS), Math.round(2.2 * FPS)], [Math.round(3.5 * FPS), Math.round(4.9 * FPS)]]);
  });

  it('lifts the brows on the high phrase only, holding through its gaps, and lets them down in silence', () => {
    const lift = browLift(pitch(6, [[0.5, 2.5, 220], [3.5, 5, 330]]), phrases, FPS, open.length);
    expect(Math.max(...lift.subarray(0, Math.round(3.5 * FPS)))).toBe(0);
    expect(Math.min(...lift.subarray(Math.round(3.9 * FPS), Math.round(4.9 * FPS)))).toBeGreaterThan(0.95);
    expect(lift[Math.round(5.9 * FPS)]).toBeLessThan(0.05);
    // A note a semitone over the median is not high.
    expect(Math.max(...browLift(pitch(6, [[0.5, 2.5, 220], [3.5, 5, 233]]), phrases, FPS, open.length))).toBe(0);
  });

  it('leans into each phrase, one way then the other, upright again by its end and in silence', () => {
    const tilt = headTilt(phrases, FPS, open.length, 150);
    expect(tilt[Math.round(0.4 * FPS)]).toBe(0);
    expect(tilt[Math.round(0.9 * FPS)]).toBeCloseTo((1.2 * Math.PI) / 180, 3);
    expect(tilt[Math.round(3.9 * FPS)]).toBeCloseTo((-1.2 * Math.PI) / 180, 3);
    expect(tilt[phrases[0]![1]]).toBe(0);
    // A big face turns less: the turn (out to half a face length) moves no pixel more than 3 px.
    expect(Math.abs(headTilt(phrases, FPS, open.length, 600)[Math.round(0.9 * FPS)]!) * 0.5 * 600).toBeCloseTo(3, 1);
  });

  it('breathes once in the pause between phrases, 1-2 px, never on a sung frame', () => {
    const breath = breaths(phrases, FPS, open.length, 150);
    for (let f = 0; f < open.length; f++) if (sung(f) || f < phrases[0]![0] || f >= phrases[1]![1]) expect(breath[f], `frame ${f}`).toBe(0);
    const rise = Math.min(...breath);
    expect(rise).toBeLessThanOrEqual(-1);
    expect(rise).toBeGreaterThanOrEqual(-2);
    // No breath in a pause under half a second.
    expect(Math.min(...breaths(phrasesOf(track(4, [[0.5, 1.5, 0.8], [1.9, 3, 0.8]]), FPS), FPS, 100, 150))).toBe(0);
  });
});
