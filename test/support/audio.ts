import { encodeWav } from '../../control-plane/src/templates/melody-synth.ts';
import { SONG_RATE, singingVoice } from './song-mix.ts';

/** A mono 16 kHz WAV of a warbling 440 Hz tone: its loudness moves twice a second, so a mouth follows it. */
export function toneWav(seconds: number): Buffer {
  const rate = 16_000;
  const pcm = Float32Array.from({ length: rate * seconds }, (_, i) => {
    const t = i / rate;
    return 0.37 * Math.abs(Math.sin(Math.PI * 2 * t)) * Math.sin(2 * Math.PI * 440 * t);
  });
  return encodeWav(pcm, rate);
}

/**
 * A mono 44.1 kHz WAV of the tests' synthesized singer (`singingVoice`), peaking at 0.9: uploads are separated into
 * a vocal stem before the mouth is driven, and a pure tone is no voice, so a test that needs the mouth to move sings.
 */
export function sungWav(seconds: number): Buffer {
  const pcm = singingVoice(seconds);
  const peak = pcm.reduce((highest, sample) => Math.max(highest, Math.abs(sample)), 0);
  return encodeWav(pcm.map((sample) => (sample * 0.9) / (peak || 1)), SONG_RATE);
}
