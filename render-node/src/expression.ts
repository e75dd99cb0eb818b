import type { PitchTrack } from './pitch-track.ts';
import { smoothstep } from './photo-sampler.ts';
import { envelope, slidingExtreme } from './signal.ts';

/**
 * The face performing beyond the mouth (issue 36): on a long loud note the eyes narrow, as a singer's do. A note
 * counts as long and loud while the mouth has stayed open at least `open` for the last `holdSeconds`; the lids then
 * come down to `depth` of the eye (a blink's 1 is shut) over `easeSeconds`, and lift as the note ends. Off in silence
 * and on short notes; the mouth is never touched, so its sync stays as it was.
 */
const NARROW = { open: 0.55, holdSeconds: 0.4, depth: 0.35, easeSeconds: 0.2 } as const;

/** Per frame, how far the lids come down for the voice's held notes (0 open … NARROW.depth), from the mouth's opening per frame. */
export function eyeNarrowing(open: Float32Array, fps: number): Float32Array {
  const frames = open.length;
  const hold = Math.max(1, Math.round(NARROW.holdSeconds * fps));
  // The least opening over the last `hold` frames (a window centred `hold` / 2 back, so shifted to end here).
  const least = slidingExtreme(open, hold, 'min');
  const half = Math.floor(hold / 2);
  const step = 1 / Math.max(1, NARROW.easeSeconds * fps);
  const out = new Float32Array(frames);
  let level = 0;
  for (let f = 0; f < frames; f++) {
    const held = f >= hold - 1 && least[f - half]! >= NARROW.open;
    level = held ? Math.min(1, level + step) : Math.max(0, level - step);
    out[f] = NARROW.depth * level * level * (3 - 2 * level);
  }
  return out;
}

/** Below this the mouth is at rest (song-drive.ts's REST_OPEN): a frame sung has its mouth open at least this much. */
const SUNG_OPEN = 0.05;
/** A pause in the voice this long or longer ends a phrase (vocal-activity.ts's phrase pause): shorter gaps are between notes. */
const PHRASE_PAUSE_SECONDS = 0.5;

/** The sung phrases, as [first, end) frame ranges: frames with the mouth open, joined across gaps under PHRASE_PAUSE_SECONDS. */
export function phrasesOf(open: Float32Array, fps: number): Array<[number, number]> {
  const pause = Math.round(PHRASE_PAUSE_SECONDS * fps);
  const phrases: Array<[number, number]> = [];
  for (let f = 0; f < open.length; f++) {
    if (open[f]! < SUNG_OPEN) continue;
    const last = phrases[phrases.length - 1];
    if (last && f - last[1] < pause) last[1] = f + 1;
    else phrases.push([f, f + 1]);
  }
  return phrases;
}

/**
 * The brow lifts on high notes: a note HIGH.from semitones or more over the clip's median sung pitch starts the lift,
 * HIGH.full semitones over lifts it fully. Within a phrase an unpitched moment (a consonant, a breath in the note)
 * keeps the last note's lift; out of phrases there is none. The lift rises over `attackSeconds` and falls over
 * `releaseSeconds`.
 */
const HIGH = { from: 3, full: 5, attackSeconds: 0.12, releaseSeconds: 0.25 } as const;

/** Per frame, how far the brows lift (0 … 1) for the voice's high notes, from its pitch track and the sung phrases. */
export function browLift(pitch: PitchTrack, phrases: Array<[number, number]>, fps: number, frames: number): Float32Array {
  const semitones = new Float32Array(frames).fill(Number.NaN);
  const sung: number[] = [];
  for (let f = 0; f < frames; f++) {
    const notes: number[] = [];
    for (let h = Math.floor((f / fps) * pitch.rate); h < Math.floor(((f + 1) / fps) * pitch.rate) && h < pitch.f0.length; h++) {
      if (pitch.f0[h]! > 0) notes.push(12 * Math.log2(pitch.f0[h]! / 440));
    }
    if (notes.length === 0) continue;
    notes.sort((a, b) => a - b);
    semitones[f] = notes[Math.floor(notes.length / 2)]!;
  }
  for (const [start, end] of phrases) for (let f = start; f < end; f++) if (!Number.isNaN(semitones[f])) sung.push(semitones[f]!);
  const out = new Float32Array(frames);
  if (sung.length === 0) return out;
  sung.sort((a, b) => a - b);
  const median = sung[Math.floor(sung.length / 2)]!;
  const target = new Float32Array(frames);
  for (const [start, end] of phrases) {
    let held = 0;
    for (let f = start; f < end; f++) {
      if (!Number.isNaN(semitones[f])) held = smoothstep(HIGH.from, HIGH.full, semitones[f]! - median);
      target[f] = held;
    }
  }
  return envelope(target, fps, HIGH.attackSeconds, HIGH.releaseSeconds);
}
