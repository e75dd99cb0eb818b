import type { MouthTrack, RenderSync } from '@petsing/workflows';
import type { DecodedAudio } from './audio-decoder.ts';
import { trackBand, type BandTrack } from './beat-tracker.ts';
import type { Rhythm } from './idle-life.ts';
import { pitchTrack, type PitchTrack } from './pitch-track.ts';
import { frameLoudness, pearson, perFrame } from './signal.ts';
import { vocalActivity, type VocalActivity } from '@petsing/platform/audio';
import { keyframedTrack, voiceTrack, type VoiceTrack } from './voice-driver.ts';

/**
 * A mouth opened less than this is at rest (two of the rig's 48 jaw steps: under a pixel on most faces). A frame of
 * the sync report counts as instrumental when, over the frame, the band plays and the voice does not.
 */
const REST_OPEN = 0.05;

/** The song's audio as the render received it: the analysis copy, and the stems when audio preparation made them. */
export interface SongAudio {
  audio: DecodedAudio;
  /** The voice alone (a vocal stem, or text-to-speech itself): the mouth follows it. */
  vocals?: DecodedAudio;
  /** Everything but the voice: the head keeps its time. */
  accompaniment?: DecodedAudio;
}

/** What drives the face rig, and the sync report of the render. */
export interface SongDrive {
  voice: VoiceTrack;
  /** The voice's pitch (the brows lift on its high notes). */
  pitch: PitchTrack;
  rhythm?: Rhythm;
  sync: RenderSync;
}

/**
 * The mouth from the vocal stem (resting wherever no voice sings), the head from the accompaniment's beats; without
 * stems, the mouth from the analysis copy as before; a template's mouth from its keyframes.
 */
export function driveFromSong(song: SongAudio, fps: number, frames: number, mouthTrack?: MouthTrack): SongDrive {
  const band = song.accompaniment ? trackBand(song.accompaniment.samples, song.accompaniment.sampleRate) : undefined;
  // Without stems (templates, audio prepared before stems existed) the analysis copy stands for the voice.
  const heard = song.vocals ?? song.audio;
  const activity = vocalActivity(heard.samples, heard.sampleRate, band?.loudDb ?? null);
  const voice = mouthTrack
    ? keyframedTrack(mouthTrack, fps, frames)
    : voiceTrack(heard.samples, heard.sampleRate, fps, frames, song.vocals ? activity : undefined);
  const rhythm = band?.beats ? { beats: band.beats, phraseStarts: activity.phraseStarts } : undefined;
  return { voice, pitch: pitchTrack(heard.samples, heard.sampleRate), ...(rhythm ? { rhythm } : {}), sync: syncReport(voice.open, heard, activity, band, fps, frames) };
}

/**
 * The render's sync report: whether the vocal track holds a voice; Pearson r between the mouth's opening and the vocal
 * track's loudness (RMS), frame by frame (null without a voice); the share of instrumental frames with the mouth at
 * rest (null without an accompaniment, or when the band never plays alone).
 */
function syncReport(open: Float32Array, vocals: DecodedAudio, activity: VocalActivity, band: BandTrack | undefined, fps: number, frames: number): RenderSync {
  const r = activity.found ? pearson(open, frameLoudness(vocals.samples, vocals.sampleRate, fps, frames)) : null;
  let instrumental = 0;
  let resting = 0;
  if (band) {
    const voiced = perFrame(activity.active, activity.rate, fps, frames);
    const playing = perFrame(band.playing, band.rate, fps, frames);
    for (let f = 0; f < frames; f++) {
      if (voiced[f]! >= 0.5 || playing[f]! < 0.5) continue;
      instrumental++;
      if (open[f]! < REST_OPEN) resting++;
    }
  }
  const rounded = (value: number) => Math.round(value * 1000) / 1000;
  return {
    vocalsFound: activity.found,
    mouthVoiceR: r === null ? null : rounded(r),
    instrumentalRestShare: instrumental ? rounded(resting / instrumental) : null,
  };
}
