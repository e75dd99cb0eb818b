import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { copyMelWindow, melSpectrogram, melStartColumn } from '../src/mel-features.ts';

// Reference produced by fixtures/mel-reference.py with librosa, independently of our implementation.
const reference = JSON.parse(readFileSync(new URL('./fixtures/mel-reference.json', import.meta.url), 'utf8')) as {
  shape: [number, number];
  values: number[][];
};

function syntheticSignal(): Float32Array {
  const rate = 16000;
  const samples = new Float32Array(Math.floor(0.6 * rate));
  for (let n = 0; n < samples.length; n++) {
    const t = n / rate;
    samples[n] =
      t < 0.1
        ? 0
        : 0.4 * Math.sin(2 * Math.PI * 440 * t) + 0.2 * Math.sin(2 * Math.PI * 1500 * t) * (t / 0.6) + 0.05 * Math.sin(2 * Math.PI * (200 + 3000 * t) * t);
  }
  return samples;
}

describe('mel features (Wav2Lip recipe)', () => {
  it('matches the librosa reference for a fixed synthetic signal', () => {
    const mel = melSpectrogram(syntheticSignal());
    expect([mel.bands, mel.columns]).toEqual(reference.shape);
    let worst = 0;
    for (let band = 0; band < mel.bands; band++) {
      for (let column = 0; column < mel.columns; column++) {
        const ours = mel.data[band * mel.columns + column]!;
        worst = Math.max(worst, Math.abs(ours - reference.values[band]![column]!));
      }
    }
    // Values span -4..4; 2e-3 is far below one dB (0.08) and catches any recipe difference.
    expect(worst).toBeLessThan(2e-3);
  });

  it('maps frames to mel columns as Wav2Lip does at 25 fps and clamps the last windows', () => {
    expect([0, 1, 2, 3, 4, 5, 24, 25].map((i) => melStartColumn(i, 25))).toEqual([0, 3, 6, 9, 12, 16, 76, 80]);
    const mel = melSpectrogram(syntheticSignal());
    const window = new Float32Array(80 * 16);
    copyMelWindow(mel, 1000, 25, window, 0);
    // The clamped window is the last 16 columns.
    expect(window[0]).toBe(mel.data[mel.columns - 16]);
    expect(window[80 * 16 - 1]).toBe(mel.data[80 * mel.columns - 1]);
  });

  it('gives -4 everywhere for digital silence', () => {
    const mel = melSpectrogram(new Float32Array(16000));
    expect(mel.columns).toBe(81);
    expect(Math.max(...mel.data)).toBe(-4);
  });
});
