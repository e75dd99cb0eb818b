import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FoundFace } from '@petsing/workflows';
import { writeSyntheticSong } from '../src/cli/synthetic-audio.ts';
import { bundledPetFaceModel, loadPetFaceModel, type PetFaceModel } from '../src/pet-face-model.ts';
import { decodeImage } from '../src/image-decoder.ts';
import { detectInPhoto, faceToFractions } from '../src/pet-face.ts';
import { prepareJob } from '../src/render-pipeline.ts';
import { tempDir } from './helpers.ts';
import { PETS } from './pet-annotations.ts';

const exec = promisify(execFile);
const cli = join(import.meta.dirname, '..', 'bin', 'render-node.mjs');
const CAT = join(PETS, 'cat-01.jpg');

let dir: string;
let audio: string;
let model: PetFaceModel;
/** The cat's face as the photo check answers it (fractions of the photo). */
let checked: FoundFace;
/** The photo's size after EXIF orientation: a job's face is in these pixels. */
let photo: { width: number; height: number };

beforeAll(async () => {
  dir = await tempDir('stored-face');
  audio = join(dir, 'song.mp3');
  await writeSyntheticSong(audio, 1);
  model = await bundledPetFaceModel();
  const { width, height, face } = await detectInPhoto(CAT, model);
  checked = faceToFractions(face!, width, height);
  const decoded = await decodeImage(CAT);
  photo = { width: decoded.orientedWidth, height: decoded.orientedHeight };
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The same face with its mouth moved by (dx, dy), fractions of the photo: a face no detector would find. */
const movedMouth = (face: FoundFace, dx: number, dy: number): FoundFace => ({ ...face, mouth: { x: face.mouth.x + dx, y: face.mouth.y + dy } });

describe('a render uses the photo check\'s face', () => {
  const prepare = (photoCheck?: { face: FoundFace | null; model?: string }) =>
    prepareJob({ imagePath: CAT, audioPath: audio, width: 192, detector: model, ...(photoCheck ? { photoCheck } : {}) });

  it('takes the stored face as it is when the node runs the model that found it, without detecting again', async () => {
    const stored = movedMouth(checked, 0.08, 0.02);
    const detect = vi.spyOn(model, 'detect');
    try {
      const job = await prepare({ face: stored, model: model.version });
      expect(detect).not.toHaveBeenCalled();
      expect(job.faceOrigin).toEqual({ source: 'photo_check', model: model.version });
      expect(job.face.mouth[0] / photo.width).toBeCloseTo(stored.mouth.x, 4);
      expect(job.face.mouth[1] / photo.height).toBeCloseTo(stored.mouth.y, 4);
      expect(job.face.species).toBe(stored.species);
    } finally {
      detect.mockRestore();
    }
  });

  it('detects again, and says why, when the face came from another model version or the photo was never checked', async () => {
    const stored = movedMouth(checked, 0.08, 0.02);
    const changed = await prepare({ face: stored, model: 'detector-000000000000+landmarks-000000000000' });
    expect(changed.faceOrigin).toEqual({ source: 'render_model_changed', model: model.version });
    const unversioned = await prepare({ face: stored });
    expect(unversioned.faceOrigin.source).toBe('render_model_changed');
    const unchecked = await prepare();
    expect(unchecked.faceOrigin).toEqual({ source: 'render_no_check', model: model.version });
    // The model's own mouth both times, far from the moved one.
    expect(changed.face.mouth).toEqual(unchecked.face.mouth);
    expect(changed.face.mouth[0] / photo.width - stored.mouth.x).toBeLessThan(-0.05);
  });

  it('the person\'s hints keep precedence over the stored face, and every given point needs no face at all', async () => {
    const hinted = await prepareJob({ imagePath: CAT, audioPath: audio, width: 192, detector: model, faceHints: { mouth: { x: 0.3, y: 0.8 } }, photoCheck: { face: checked, model: model.version } });
    expect(hinted.faceOrigin.source).toBe('photo_check');
    expect(hinted.face.mouth[0] / photo.width).toBeCloseTo(0.3, 4);
    const given = await prepareJob({
      imagePath: CAT, audioPath: audio, width: 192, detector: model, photoCheck: { face: checked, model: model.version },
      faceHints: { mouth: { x: 0.5, y: 0.7 }, nose: { x: 0.5, y: 0.6 }, chin: { x: 0.5, y: 0.8 }, eyes: [{ x: 0.4, y: 0.45 }, { x: 0.6, y: 0.45 }] },
    });
    expect(given.faceOrigin).toEqual({ source: 'given' });
  });

  it('refuses a stored "no face" without hints as face_not_found rather than finding one the owner never saw', async () => {
    await expect(prepare({ face: null, model: model.version })).rejects.toMatchObject({ code: 'face_not_found' });
  });
});

describe('pet-face model sessions', () => {
  it('are warmed up as they load: one blank inference per session, logged with its time', async () => {
    // Every session is an instance of onnxruntime's InferenceSession class (the factory's type hides its prototype).
    const run = vi.spyOn((ort.InferenceSession as unknown as { prototype: ort.InferenceSession }).prototype, 'run');
    const lines: Array<[string, Record<string, unknown> | undefined]> = [];
    const logger = { info: (message: string, fields?: Record<string, unknown>) => lines.push([message, fields]), warn: () => {}, error: () => {} };
    try {
      const loaded = await loadPetFaceModel({ logger });
      expect(run).toHaveBeenCalledTimes(2);
      // Both warm-up inputs are blank.
      for (const [feeds] of run.mock.calls) expect(Object.values(feeds as Record<string, ort.Tensor>).every((tensor) => (tensor.data as Float32Array).every((v) => v === 0))).toBe(true);
      const ready = lines.find(([message]) => message === 'pet-face model ready')?.[1];
      expect(ready).toMatchObject({ provider: 'cpu', providers: ['cpu'], loadMs: expect.any(Number), warmUpMs: expect.any(Number) });
      await loaded.release();
    } finally {
      run.mockRestore();
    }
  });

  it('are created with the provider list asked for: CUDA first, the CPU for the rest', async () => {
    const create = vi.spyOn(ort.InferenceSession, 'create');
    const tf32 = process.env.NVIDIA_TF32_OVERRIDE;
    try {
      const loaded = await loadPetFaceModel({ provider: 'cuda', cudaFallback: 'cpu' });
      const lists = create.mock.calls.map(([, options]) => (options as ort.InferenceSession.SessionOptions).executionProviders);
      expect(lists[0]).toEqual([{ name: 'cuda', deviceId: 0 }, 'cpu']);
      // TF32 off before the first CUDA session (onnxruntime-node cannot pass use_tf32), unless the operator chose.
      expect(process.env.NVIDIA_TF32_OVERRIDE).toBe(tf32 ?? '0');
      // Where CUDA cannot load (no GPU here), each session falls back to the CPU: never silently (logged).
      expect(loaded.providers).toEqual(loaded.provider === 'cuda' ? ['cuda', 'cpu'] : ['cpu']);
      await loaded.release();
    } finally {
      create.mockRestore();
      if (tf32 === undefined) delete process.env.NVIDIA_TF32_OVERRIDE;
    }
  });
});

describe('--provider reaches the pet-face model in every command', () => {
  const cudaRefused = (error: { code?: number; stderr?: string }) => {
    expect(error.code).toBe(1);
    expect(error.stderr).toContain('provider_unavailable');
    expect(error.stderr).toContain('pet-face detector');
  };

  it('detect --json names the model and the providers its sessions run on', async () => {
    const { stdout } = await exec(process.execPath, [cli, 'detect', '--image', CAT, '--json', '--provider', 'cpu']);
    const answer = JSON.parse(stdout) as { face: { species: string }; model: string; providers: string[] };
    expect(answer).toMatchObject({ face: { species: 'cat' }, model: model.version, providers: ['cpu'] });
  });

  it('detect and render --provider cuda load the pet-face model on CUDA, refusing where it cannot load', async () => {
    const detect = await exec(process.execPath, [cli, 'detect', '--image', CAT, '--json', '--provider', 'cuda', '--cuda-fallback', 'refuse']).then(
      ({ stdout }) => ({ providers: (JSON.parse(stdout) as { providers: string[] }).providers }),
      (error: { code?: number; stderr?: string }) => error,
    );
    if ('providers' in detect) {
      expect(detect.providers).toEqual(['cuda', 'cpu']);
      return;
    }
    cudaRefused(detect);
    const render = await exec(process.execPath, [cli, 'render', '--image', CAT, '--audio', audio, '--out', join(dir, 'cuda.mp4'), '--size', '128', '--provider', 'cuda', '--cuda-fallback', 'refuse']).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => error,
    );
    cudaRefused(render);
  });

  it('detect --provider cuda --cuda-fallback cpu says it fell back and reports the CPU', async () => {
    const { stdout, stderr } = await exec(process.execPath, [cli, 'detect', '--image', CAT, '--json', '--provider', 'cuda', '--cuda-fallback', 'cpu']);
    const { providers } = JSON.parse(stdout) as { providers: string[] };
    if (providers[0] === 'cuda') return;
    expect(providers).toEqual(['cpu']);
    expect(stderr).toContain('CUDA execution provider unavailable for the pet-face detector; falling back to CPU');
  });
});
