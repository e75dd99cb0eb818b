import { execFile } from 'node:child_process';
import { access, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSyntheticSong } from '../src/cli/synthetic-audio.ts';
import { parseRenderNodeEnv, renderNodeEnvSchema } from '../src/config.ts';
import { ensureGeneratedModel } from '../src/model-generator.ts';
import { probe, tempDir } from './helpers.ts';
import { petPhoto } from '../../test/support/pet-photo.ts';

const exec = promisify(execFile);
const cli = join(import.meta.dirname, '..', 'bin', 'render-node.mjs');
let dir: string;

beforeAll(async () => {
  dir = await tempDir('cli');
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('environment config', () => {
  it('has working defaults', () => {
    expect(parseRenderNodeEnv({})).toEqual({
      RENDER_MODEL_PATH: undefined,
      RENDER_EXECUTION_PROVIDER: 'cpu',
      RENDER_CUDA_FALLBACK: 'refuse',
      RENDER_OUTPUT_SIZE: 720,
      RENDER_FPS: 25,
      RENDER_BATCH_SIZE: 32,
      RENDER_RIG_THREADS: undefined,
      RENDER_DETECTOR_MODEL_PATH: undefined,
    });
  });

  it('parses strings and refuses out-of-range values', () => {
    const parsed = parseRenderNodeEnv({ RENDER_EXECUTION_PROVIDER: 'cuda', RENDER_CUDA_FALLBACK: 'cpu', RENDER_OUTPUT_SIZE: '720', RENDER_MODEL_PATH: 'models/w2l.onnx' });
    expect([parsed.RENDER_EXECUTION_PROVIDER, parsed.RENDER_CUDA_FALLBACK, parsed.RENDER_OUTPUT_SIZE, parsed.RENDER_MODEL_PATH]).toEqual(['cuda', 'cpu', 720, 'models/w2l.onnx']);
    expect(renderNodeEnvSchema.safeParse({ RENDER_OUTPUT_SIZE: '1080' }).success).toBe(true);
    expect(renderNodeEnvSchema.safeParse({ RENDER_OUTPUT_SIZE: '1082' }).success).toBe(false);
    expect(renderNodeEnvSchema.safeParse({ RENDER_OUTPUT_SIZE: '511' }).success).toBe(false);
    expect(renderNodeEnvSchema.safeParse({ RENDER_EXECUTION_PROVIDER: 'rocm' }).success).toBe(false);
  });
});

describe('CLI', () => {
  it('renders a video with the render command', async () => {
    const image = join(dir, 'pet.png');
    const audio = join(dir, 'song.mp3');
    const out = join(dir, 'out.mp4');
    await writeFile(image, await petPhoto(512));
    await writeSyntheticSong(audio, 2);
    const { stdout } = await exec(process.execPath, [cli, 'render', '--image', image, '--audio', audio, '--out', out, '--size', '256', '--no-watermark']);
    expect(stdout).toMatch(/50 frames/);
    const info = await probe(out);
    expect(info.streams.find((s) => s.codec_type === 'video')?.width).toBe(256);
    await access(join(dir, 'out.jpg'));
  });

  it('render --aspect 4:5 --json prints one JSON object with the frame size, the crop and the face', async () => {
    const image = join(dir, 'pet-json.png');
    const audio = join(dir, 'song-json.mp3');
    const out = join(dir, 'out-json.mp4');
    await writeFile(image, await petPhoto(1024));
    await writeSyntheticSong(audio, 1);
    const { stdout } = await exec(process.execPath, [cli, 'render', '--image', image, '--audio', audio, '--out', out, '--size', '256', '--aspect', '4:5', '--json']);
    const result = JSON.parse(stdout) as Record<string, unknown>;
    expect(result).toMatchObject({ width: 256, height: 320, aspect: '4:5', renderer: 'face-rig', fps: 25, frames: 25 });
    const crop = result.crop as { left: number; top: number; width: number; height: number };
    expect(crop.width / crop.height).toBeCloseTo(4 / 5, 2);
    expect(Object.keys(result.face as object)).toEqual(expect.arrayContaining(['eyes', 'nose', 'mouth', 'chin', 'head']));
    expect(Object.keys(result.stage_ms as object)).toEqual(expect.arrayContaining(['decode', 'detect', 'composite', 'encode', 'total']));
    const info = await probe(out);
    const video = info.streams.find((s) => s.codec_type === 'video')!;
    expect([video.width, video.height]).toEqual([256, 320]);
  });

  it('render refuses an unknown --aspect', async () => {
    const error = await exec(process.execPath, [cli, 'render', '--image', 'a.png', '--audio', 'b.mp3', '--out', 'c.mp4', '--aspect', '16:9']).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(error?.code).toBe(2);
    expect(error?.stderr).toMatch(/--aspect takes one of square, 4:5, 9:16/);
  });

  it('reports a permanent error with its code and exit status 1', async () => {
    const error = await exec(process.execPath, [cli, 'render', '--image', join(dir, 'missing.png'), '--audio', join(dir, 'missing.mp3'), '--out', join(dir, 'x.mp4')]).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(error?.code).toBe(1);
    expect(error?.stderr).toMatch(/error \((image_undecodable|audio_undecodable), permanent\)/);
  });

  it('doctor checks ffmpeg, the renderer and the pet-face model', async () => {
    const { stdout } = await exec(process.execPath, [cli, 'doctor']);
    for (const line of ['ok    ffmpeg', 'ok    renderer: the face rig', 'ok    face detector (pet-face model, cpu): pet-face model', 'all checks passed']) expect(stdout).toContain(line);
    expect(stdout).toMatch(/the drawn sample pet answered in \d+ ms/);
  });

  it('doctor checks a learned model against the contract', async () => {
    const model = await ensureGeneratedModel({ cacheDir: dir });
    const { stdout } = await exec(process.execPath, [cli, 'doctor', '--model', model]);
    for (const line of ['ok    lip-sync model (cpu)', 'all checks passed']) expect(stdout).toContain(line);
  });

  it('doctor fails when CUDA is asked for a learned model and cannot load, and says why', async () => {
    const model = await ensureGeneratedModel({ cacheDir: dir });
    const result = await exec(process.execPath, [cli, 'doctor', '--model', model, '--provider', 'cuda', '--cuda-fallback', 'refuse']).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string }) => e,
    );
    // On a machine with working CUDA this check passes instead; here (no GPU) it must fail loudly.
    if (result.code === 0) expect(result.stdout).toContain('provider cuda');
    else {
      expect(result.stdout).toMatch(/FAIL {2}lip-sync model \(cuda\): CUDA execution provider could not be loaded/);
      // The pet-face model follows the node's provider too, and refuses the same way.
      expect(result.stdout).toMatch(/FAIL {2}face detector \(pet-face model, cuda\): CUDA execution provider could not be loaded/);
    }
  });
});
