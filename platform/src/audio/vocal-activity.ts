import { hopLevels, hopOf, percentile } from './levels.ts';

/**
 * Where a vocal stem holds a voice (render-node/README.md, "Driven by the vocal stem"; the control plane's voice check). The stem's level (RMS over 40 ms, every
 * 10 ms) is compared with its sung level, the loud end of its levels (95th percentile, as the mouth's own
 * normalisation): the voice comes in when the stem rises within VOICE_ON_DB of it, and goes out only after it stays
 * more than VOICE_OFF_DB under it for HANGOVER_SECONDS (the gaps between notes and consonants stay sung). What a
 * separator leaves of the band in the stem is far quieter than that (40 dB and more under the voice on the project's
 * made songs), but can burst (a snare's crack): bursts shorter than MIN_BURST_SECONDS are not a voice. A soft verse
 * under a loud chorus, or a singer's quiet first note (22 dB under on the made songs' singer), still counts.
 */
const SUNG_PERCENTILE = 0.95;
const VOICE_ON_DB = 24;
const VOICE_OFF_DB = 30;
const HANGOVER_SECONDS = 0.25;
const MIN_BURST_SECONDS = 0.1;
/**
 * A stem holds no voice at all when its sung level is under -60 dBFS (digital near-silence), or more than BLEED_DB
 * under the band's loud level (an instrumental's stem: what the separator leaves of the band, 45-60 dB under it on
 * the project's made songs), or when the voice it finds lasts less than MIN_VOICED_SECONDS in all.
 */
const QUIETEST_SUNG_DB = -60;
const BLEED_DB = 30;
const MIN_VOICED_SECONDS = 0.5;
/** A phrase starts where the voice comes back after at least this long a pause (a breath between lines). */
const PHRASE_PAUSE_SECONDS = 0.5;

export interface VocalActivity {
  /** Hops a second (100). */
  rate: number;
  /** 1 where the voice sings (or speaks), per hop. */
  active: Uint8Array;
  /** Whether the stem holds a voice at all; when false, `active` is all 0. */
  found: boolean;
  /** Seconds at which the voice comes back after a pause (the first entry too). */
  phraseStarts: number[];
}

/**
 * The voice activity of a vocal stem (mono samples). `bandLoudDb`: the accompaniment's loud level at the same scale
 * (the two stems are at the source's level), or null without an accompaniment (a voice alone).
 */
export function vocalActivity(vocals: Float32Array, sampleRate: number, bandLoudDb: number | null): VocalActivity {
  const { rate } = hopOf(sampleRate);
  const level = hopLevels(vocals, sampleRate);
  const sung = percentile(level, SUNG_PERCENTILE);
  const active = new Uint8Array(level.length);
  const plausible = sung >= QUIETEST_SUNG_DB && (bandLoudDb === null || sung >= bandLoudDb - BLEED_DB);
  if (plausible) markVoice(level, sung, rate, active);
  let voiced = 0;
  for (const value of active) voiced += value;
  const found = plausible && voiced >= MIN_VOICED_SECONDS * rate;
  if (!found) active.fill(0);

  const phraseStarts: number[] = [];
  let lastActive = -Infinity;
  for (let h = 0; h < active.length; h++) {
    if (!active[h]) continue;
    if (h - lastActive > PHRASE_PAUSE_SECONDS * rate) phraseStarts.push(h / rate);
    lastActive = h;
  }
  return { rate, active, found, phraseStarts };
}

/** Marks the hops of `level` (dB) where the voice is on, by the thresholds above relative to `sung`. */
function markVoice(level: Float32Array, sung: number, rate: number, active: Uint8Array): void {
  const hangover = Math.round(HANGOVER_SECONDS * rate);
  let on = false;
  /** The first hop of the current stretch under the off threshold, while the voice is on. */
  let quietSince = -1;
  for (let h = 0; h < level.length; h++) {
    const value = level[h]!;
    if (value >= sung - VOICE_ON_DB) {
      on = true;
      quietSince = -1;
    } else if (on && value < sung - VOICE_OFF_DB) {
      if (quietSince < 0) quietSince = h;
      if (h - quietSince >= hangover) {
        // The voice ended where the quiet began: the hangover's hops are the pause, not the voice.
        on = false;
        active.fill(0, quietSince, h);
        quietSince = -1;
      }
    } else if (on) quietSince = -1;
    active[h] = on ? 1 : 0;
  }
  if (on && quietSince >= 0) active.fill(0, quietSince);
  // Bursts too short to be sung.
  const shortest = Math.round(MIN_BURST_SECONDS * rate);
  for (let h = 0; h < active.length; ) {
    if (!active[h]) {
      h++;
      continue;
    }
    let end = h;
    while (end < active.length && active[end]) end++;
    if (end - h < shortest) active.fill(0, h, end);
    h = end;
  }
}
