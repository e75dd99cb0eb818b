import { describe, expect, it } from 'vitest';
import { pitchTrack } from '../src/pitch-track.ts';

const RATE = 16_000;

/** A voice-like tone: `f0` with its first five harmonics falling off, `seconds` long, at amplitude 0.3. */
function tone(f0: number, seconds: number): Float32Array {
  return Float32Array.from({ length: Math.round(seconds * RATE) }, (_, i) => {
    let sum = 0;
    for (let k = 1; k <= 5; k++) sum += Math.sin((2 * Math.PI * k * f0 * i) / RATE) / k;
    return 0.3 * sum / 2.3;
  });
}

function join(...parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The median pitch (Hz) found between `from` and `to` seconds, and the share of those hops with a pitch. */
function found(track: { rate: number; f0: Float32Array }, from: number, to: number): { median: number; voiced: number } {
  const hops = Array.from(track.f0.subarray(Math.round(from * track.rate), Math.round(to * track.rate)));
  const voiced = hops.filter((f) => f > 0).sort((a, b) => a - b);
  return { median: voiced[Math.floor(voiced.length / 2)] ?? 0, voiced: voiced.length / hops.length };
}

describe('the pitch track', () => {
  it('finds sung fundamentals from a bass to a soprano within a quarter of a semitone', () => {
    for (const f0 of [82.4, 146.8, 220, 440, 659.3, 880]) {
      const { median, voiced } = found(pitchTrack(tone(f0, 0.6), RATE), 0.1, 0.5);
      expect(voiced, `${f0} Hz voiced`).toBeGreaterThan(0.95);
      expect(Math.abs(12 * Math.log2(median / f0)), `${f0} Hz → ${median}`).toBeLessThan(0.25);
    }
  });

  it('follows a tune note by note, and finds no pitch in silence or in noise', () => {
    let seed = 7;
    const noise = Float32Array.from({ length: RATE / 2 }, () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return 0.3 * (seed / 2 ** 31 - 0.5);
    });
    const track = pitchTrack(join(tone(196, 0.5), new Float32Array(RATE / 2), tone(311.1, 0.5), noise, tone(196, 0.5)), RATE);
    expect(found(track, 0.1, 0.4).median).toBeCloseTo(196, 0);
    expect(found(track, 0.6, 0.9).voiced).toBe(0);
    expect(found(track, 1.1, 1.4).median).toBeCloseTo(311.1, 0);
    expect(found(track, 1.6, 1.9).voiced).toBeLessThan(0.05);
    expect(found(track, 2.1, 2.4).median).toBeCloseTo(196, 0);
  });
});
