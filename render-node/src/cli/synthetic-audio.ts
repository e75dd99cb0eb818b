import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A song-like test signal made by ffmpeg: a voice-like harmonic tone whose pitch wanders, sung in
 * syllables (a 2.5 Hz loudness envelope that drops to silence), with a 1.5 s pause in every 8 s.
 */
const SINGING_EXPRESSION =
  "(0.5*sin(2*PI*(220+40*sin(2*PI*0.3*t))*t)+0.25*sin(4*PI*(220+40*sin(2*PI*0.3*t))*t)+0.12*sin(6*PI*(220+40*sin(2*PI*0.3*t))*t))" +
  '*pow(max(0,sin(2*PI*1.25*t)),2)*lt(mod(t,8),6.5)';

export async function writeSyntheticSong(path: string, seconds: number): Promise<void> {
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', `aevalsrc='${SINGING_EXPRESSION}':s=44100:d=${seconds}`, '-c:a', 'libmp3lame', '-b:a', '128k', path]);
}

/**
 * A band-like test signal at 120 beats a minute: a kick (a falling sine) on every beat, a noise hi-hat on the
 * off-beats, and a bass note under each bar. For the benchmark's stems (an accompaniment whose beats drive the head).
 */
const BAND_EXPRESSION =
  '0.6*sin(2*PI*(50+90*exp(-mod(t,0.5)*40))*mod(t,0.5))*exp(-mod(t,0.5)*12)' +
  '+0.15*(random(0)-0.5)*exp(-mod(t+0.25,0.5)*60)' +
  '+0.2*sin(2*PI*110*t)*(0.6+0.4*exp(-mod(t,2)*2))';

/** The synthetic song (the voice) over the synthetic band: the mix, and each part alone, as WAV. */
export async function writeSyntheticMix(paths: { mix: string; voice: string; band: string }, seconds: number): Promise<void> {
  const wav = ['-c:a', 'pcm_s16le', '-ar', '44100'];
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', `aevalsrc='${SINGING_EXPRESSION}':s=44100:d=${seconds}`, ...wav, paths.voice]);
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', `aevalsrc='${BAND_EXPRESSION}':s=44100:d=${seconds}`, ...wav, paths.band]);
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-i', paths.voice, '-i', paths.band, '-filter_complex', 'amix=inputs=2:normalize=0', ...wav, paths.mix]);
}
