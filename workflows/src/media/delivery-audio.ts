/**
 * The video's soundtrack (docs/decisions.md, "Delivery audio"). Audio preparation writes it once per audio, measured
 * to these targets (control-plane/src/media/loudness.ts); a render node copies it into the MP4 as it is, and encodes
 * the same way only for a render planned before it existed.
 */

export const DELIVERY_AUDIO_SAMPLE_RATE = 48_000;
/** ffmpeg's own AAC-LC encoder at 192 kb/s and 48 kHz (the copy is made stereo before it: a mono source plays on both channels). */
export const DELIVERY_AUDIO_ENCODING = ['-c:a', 'aac', '-b:a', '192k', '-ar', String(DELIVERY_AUDIO_SAMPLE_RATE)] as const;

/** Loudness of every soundtrack: −14 LUFS integrated (what the big streaming services play at), true peak at most −1 dBTP. */
export const DELIVERY_LOUDNESS = { integratedLufs: -14, truePeakDbtp: -1 } as const;
