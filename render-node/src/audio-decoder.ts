import { readFile, stat } from 'node:fs/promises';
import { runProcess } from '@petsing/platform/tools';
import { pcm16MonoWavSamples } from '@petsing/platform/audio';
import { RenderError } from './errors.ts';
import { MEL_RECIPE } from './mel-features.ts';

export interface DecodedAudio {
  /** Mono float samples at 16 kHz, the rate the mel recipe expects. */
  samples: Float32Array;
  sampleRate: number;
  durationSeconds: number;
  codec: string;
}

/** Longer inputs are refused before decoding: the service caps output at 30 s, this leaves headroom for previews. */
const MAX_DECODE_SECONDS = 600;

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
}

async function probeAudio(path: string, signal?: AbortSignal): Promise<{ codec: string; containerDuration: number | undefined }> {
  const probe = await runProcess('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name:format=duration', '-of', 'json', path], { signal });
  if (probe.code !== 0) {
    throw new RenderError('audio_undecodable', 'the audio file cannot be read', 'Upload an MP3, WAV, M4A or WebM audio file.', {
      detail: `ffprobe: ${probe.stderr.trim().split('\n').pop() ?? ''}`,
    });
  }
  const parsed = JSON.parse(probe.stdout.toString('utf8') || '{}') as { streams?: ProbeStream[]; format?: { duration?: string } };
  const audioStream = (parsed.streams ?? []).find((stream) => stream.codec_type === 'audio');
  if (!audioStream) {
    throw new RenderError('audio_no_stream', 'the audio file contains no audio stream', 'The file has no sound track; upload an audio file (MP3, WAV, M4A or WebM).');
  }
  const duration = Number(parsed.format?.duration);
  return { codec: audioStream.codec_name ?? 'unknown', containerDuration: Number.isFinite(duration) ? duration : undefined };
}

/** Decodes the first audio stream to 16 kHz mono float with ffmpeg. */
export async function decodeAudio(path: string, signal?: AbortSignal): Promise<DecodedAudio> {
  const { codec, containerDuration } = await probeAudio(path, signal);
  if (containerDuration !== undefined && containerDuration > MAX_DECODE_SECONDS) {
    throw new RenderError('audio_undecodable', `audio lasts ${containerDuration.toFixed(1)} s, more than ${MAX_DECODE_SECONDS} s`, 'Upload a clip of at most 30 seconds.');
  }
  const rate = MEL_RECIPE.sampleRate;
  const decoded = await runProcess(
    'ffmpeg',
    ['-nostdin', '-v', 'error', '-i', path, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', String(rate), '-f', 'f32le', '-acodec', 'pcm_f32le', 'pipe:1'],
    { signal, maxStdoutBytes: (MAX_DECODE_SECONDS + 5) * rate * 4 },
  );
  if (decoded.code !== 0) {
    throw new RenderError('audio_undecodable', 'the audio cannot be decoded', 'The audio file looks damaged; export it again as MP3 or WAV.', {
      detail: `ffmpeg: ${decoded.stderr.trim().split('\n').pop() ?? ''}`,
    });
  }
  const bytes = decoded.stdout;
  const samples = new Float32Array(bytes.length / 4);
  // Copy rather than view: the Buffer may sit at an offset that is not 4-byte aligned.
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readFloatLE(i * 4);
  if (samples.length < rate * 0.05) {
    throw new RenderError('audio_empty', `the audio stream decodes to ${samples.length} samples`, 'The audio is empty or shorter than a frame; upload a longer clip.');
  }
  return { samples, sampleRate: rate, durationSeconds: samples.length / rate, codec };
}

/**
 * The samples of a 16-bit PCM mono WAV at the decoder's rate (what audio preparation writes for the stems), read
 * directly: no ffprobe and ffmpeg to start for each stem. Null for anything else (the caller decodes it with ffmpeg).
 */
async function readAnalysisWav(path: string): Promise<DecodedAudio | null> {
  const rate = MEL_RECIPE.sampleRate;
  if ((await stat(path)).size > 64 + (MAX_DECODE_SECONDS + 5) * rate * 2) return null;
  const samples = pcm16MonoWavSamples(await readFile(path), rate);
  return samples && samples.length >= rate * 0.05 ? { samples, sampleRate: rate, durationSeconds: samples.length / rate, codec: 'pcm_s16le' } : null;
}

/** A stem of the audio (mono 16 kHz WAV from audio preparation): read directly, or decoded by ffmpeg when it is anything else. */
export async function decodeStem(path: string, signal?: AbortSignal): Promise<DecodedAudio> {
  return (await readAnalysisWav(path)) ?? (await decodeAudio(path, signal));
}
