import { encodeWav } from '../../control-plane/src/templates/melody-synth.ts';

/** A mono 16 kHz WAV of a warbling 440 Hz tone: its loudness moves twice a second, so a mouth follows it. */
export function toneWav(seconds: number): Buffer {
  const rate = 16_000;
  const pcm = Float32Array.from({ length: rate * seconds }, (_, i) => {
    const t = i / rate;
    return 0.37 * Math.abs(Math.sin(Math.PI * 2 * t)) * Math.sin(2 * Math.PI * 440 * t);
  });
  return encodeWav(pcm, rate);
}
