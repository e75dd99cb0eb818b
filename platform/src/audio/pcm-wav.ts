/**
 * The samples of a 16-bit PCM mono WAV at `sampleRate` (what audio preparation writes for the analysis copy and the
 * stems), read directly; null for anything else (the caller decodes it with ffmpeg).
 */
export function pcm16MonoWavSamples(bytes: Buffer, sampleRate: number): Float32Array | null {
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') return null;
  let format: { tag: number; channels: number; rate: number; bits: number } | undefined;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = bytes.toString('ascii', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    const body = at + 8;
    if (id === 'fmt ' && size >= 16 && body + 16 <= bytes.length) {
      format = { tag: bytes.readUInt16LE(body), channels: bytes.readUInt16LE(body + 2), rate: bytes.readUInt32LE(body + 4), bits: bytes.readUInt16LE(body + 14) };
    } else if (id === 'data') {
      if (!format || format.tag !== 1 || format.channels !== 1 || format.rate !== sampleRate || format.bits !== 16) return null;
      const count = Math.floor(Math.min(size, bytes.length - body) / 2);
      const samples = new Float32Array(count);
      for (let i = 0; i < count; i++) samples[i] = bytes.readInt16LE(body + 2 * i) / 32768;
      return samples;
    }
    at = body + size + (size % 2);
  }
  return null;
}
