import type { VocalActivity } from './vocal-activity.ts';

/**
 * A soundtrack's singing window (README, "The best 30 seconds"): where a source longer than a video may last is cut.
 * The window starts a little before a phrase start (a voice coming back after a pause), so its first consonant is
 * kept, and is the one holding the most voiced hops (the earliest of equals); a phrase too near the end for a whole
 * window gives the window that ends with the source. Without a voice, the window is the source's start.
 */
const PHRASE_LEAD_SECONDS = 0.2;

export interface SingingWindow {
  startSeconds: number;
  durationSeconds: number;
  /** Seconds the voice sings within the window. */
  voicedSeconds: number;
}

/** The window of `windowSeconds` with the most singing in a source of `sourceSeconds`, by the vocal stem's `activity`. */
export function bestSingingWindow(activity: VocalActivity, sourceSeconds: number, windowSeconds: number): SingingWindow {
  const durationSeconds = Math.min(sourceSeconds, windowSeconds);
  const voicedIn = (start: number) => voicedSeconds(activity, start, start + durationSeconds);
  let best: SingingWindow = { startSeconds: 0, durationSeconds, voicedSeconds: voicedIn(0) };
  if (sourceSeconds <= windowSeconds || !activity.found) return best;
  for (const phrase of activity.phraseStarts) {
    // A phrase too near the end for a whole window: the window ends with the source instead.
    const start = Math.min(Math.max(0, roundToHop(phrase - PHRASE_LEAD_SECONDS, activity.rate)), sourceSeconds - durationSeconds);
    const voiced = voicedIn(start);
    if (voiced > best.voicedSeconds) best = { startSeconds: start, durationSeconds, voicedSeconds: voiced };
  }
  return best;
}

/** Seconds of `activity` that sing between `from` and `to` (seconds). */
export function voicedSeconds(activity: VocalActivity, from: number, to: number): number {
  const first = Math.max(0, Math.floor(from * activity.rate));
  const last = Math.min(activity.active.length, Math.ceil(to * activity.rate));
  let voiced = 0;
  for (let h = first; h < last; h++) voiced += activity.active[h]!;
  return voiced / activity.rate;
}

function roundToHop(seconds: number, rate: number): number {
  return Math.round(seconds * rate) / rate;
}
