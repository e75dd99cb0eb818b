import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../src/logger.ts';
import { pearson as signalPearson } from '../src/signal.ts';

export const run = promisify(execFile);

export const testLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };

export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `petsing-render-test-${prefix}-`));
}

export async function writeSilence(path: string, seconds: number): Promise<void> {
  await run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', `anullsrc=r=44100:cl=mono`, '-t', String(seconds), '-c:a', 'pcm_s16le', path]);
}

/** Decodes audio to 16 kHz mono floats with ffmpeg, independently of the render node's decoder. */
export async function decodeSamples(path: string): Promise<Float32Array> {
  const { stdout } = await run('ffmpeg', ['-nostdin', '-v', 'error', '-i', path, '-ac', '1', '-ar', '16000', '-f', 'f32le', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 1 << 28,
  });
  const samples = new Float32Array(stdout.length / 4);
  for (let i = 0; i < samples.length; i++) samples[i] = stdout.readFloatLE(i * 4);
  return samples;
}

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** Decodes one rectangle of every frame as 8-bit grey: frames × (width·height). */
export async function decodeRegion(video: string, box: Box): Promise<Uint8Array[]> {
  const { stdout } = await run(
    'ffmpeg',
    ['-nostdin', '-v', 'error', '-i', video, '-vf', `crop=${box.width}:${box.height}:${box.left}:${box.top}`, '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 1 << 28 },
  );
  const frameBytes = box.width * box.height;
  const frames: Uint8Array[] = [];
  for (let offset = 0; offset + frameBytes <= stdout.length; offset += frameBytes) frames.push(stdout.subarray(offset, offset + frameBytes));
  return frames;
}

export function meanAbsDiff(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

/** Pearson's r (the render's own, src/signal.ts), NaN where a series is constant. */
export const pearson = (x: ArrayLike<number>, y: ArrayLike<number>): number => signalPearson(x, y) ?? Number.NaN;

export interface ProbedStream {
  codec_type: string;
  codec_name: string;
  width?: number;
  height?: number;
  r_frame_rate?: string;
  pix_fmt?: string;
  nb_frames?: string;
}

export async function probe(path: string): Promise<{ streams: ProbedStream[]; format: { duration: string; tags?: Record<string, string> } }> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', path]);
  return JSON.parse(stdout) as { streams: ProbedStream[]; format: { duration: string } };
}
