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
