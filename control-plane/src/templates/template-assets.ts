import { spawn } from 'node:child_process';
import type { TemplateDefinition } from './template-catalog.ts';
import { encodeWav, mouthKeyframes, synthesizeSong } from './melody-synth.ts';
import { renderPreviewImage } from './template-preview.ts';

export interface TemplateAssets {
  /** The song as people listen to it before choosing (stereo MP3). */
  audio: Buffer;
  audioContentType: 'audio/mpeg';
  /** The song in stereo, lossless (16-bit WAV): what its videos' soundtrack is prepared from. */
  mix: Buffer;
  /** Its voice alone (mono 16-bit WAV), at its level in the mix: what the render listens to. */
  voice: Buffer;
  stemContentType: 'audio/wav';
  durationSeconds: number;
  previewImage: Buffer;
  previewImageContentType: 'image/png';
  /** The song's mouth keyframes (the render contract's MouthTrack), as JSON. */
  mouthTrack: Buffer;
  mouthTrackContentType: 'application/json';
}

export interface EncodeOptions {
  /** Defaults to `ffmpeg` on the PATH. */
  ffmpegPath?: string;
}

const sampleRate = 44100;
const stderrTailChars = 2000;

/** Encodes a WAV file to MP3 with ffmpeg's libmp3lame, streaming through stdin and stdout. */
export function encodeMp3(wav: Buffer, { ffmpegPath = 'ffmpeg' }: EncodeOptions = {}): Promise<Buffer> {
  // bitexact and no ID3 tag keep ffmpeg's version string out of the file, so the bytes depend only on the input.
  const args = [
    '-hide_banner', '-nostdin', '-loglevel', 'error',
    '-f', 'wav', '-i', 'pipe:0',
    '-map_metadata', '-1', '-fflags', '+bitexact', '-flags:a', '+bitexact',
    '-c:a', 'libmp3lame', '-b:a', '128k',
    '-id3v2_version', '0', '-write_id3v1', '0',
    '-f', 'mp3', 'pipe:1',
  ];
  return new Promise((resolve, reject) => {
    const ffmpeg = spawn(ffmpegPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    let stderr = '';
    ffmpeg.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    ffmpeg.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-stderrTailChars);
    });
    // ffmpeg may exit before reading all its input; the exit code and stderr explain why, not EPIPE.
    ffmpeg.stdin.on('error', () => {});
    ffmpeg.on('error', (error) => reject(new Error(`Could not run ffmpeg (${ffmpegPath}): ${error.message}`)));
    ffmpeg.on('close', (code, signal) => {
      if (code === 0) {
        resolve(Buffer.concat(stdout));
        return;
      }
      const status = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      reject(new Error(`ffmpeg MP3 encoding failed: ffmpeg ${status}: ${stderr.trim() || '(no stderr output)'}`));
    });
    ffmpeg.stdin.end(wav);
  });
}

export async function buildTemplateAssets(def: TemplateDefinition, options: EncodeOptions = {}): Promise<TemplateAssets> {
  const song = synthesizeSong(def, { sampleRate });
  const mix = encodeWav(song.mix, sampleRate);
  const [audio, previewImage] = await Promise.all([
    encodeMp3(mix, options),
    renderPreviewImage(def),
  ]);
  return {
    audio,
    audioContentType: 'audio/mpeg',
    mix,
    voice: encodeWav(song.voice, sampleRate),
    stemContentType: 'audio/wav',
    durationSeconds: song.voice.length / sampleRate,
    previewImage,
    previewImageContentType: 'image/png',
    mouthTrack: Buffer.from(JSON.stringify({ keyframes: mouthKeyframes(def) })),
    mouthTrackContentType: 'application/json',
  };
}
