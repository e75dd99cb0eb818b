import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeImage } from '../src/image-decoder.ts';
import { readOnnxMetadata } from '../src/onnx-metadata.ts';
import { loadPetFaceModel } from '../src/pet-face-model.ts';
import { DetectionFailure } from '../src/pet-face.ts';
import { run, tempDir } from './helpers.ts';
import { PETS } from './pet-annotations.ts';

const TRAINING = join(import.meta.dirname, '..', 'training');
const PYTHON = join(TRAINING, '.venv', 'bin', 'python');

/**
 * npm run train:face end to end on a handful of photos of ../shared/petfaces (CI does not train the real
 * model): both networks train one epoch from the pretrained backbone, export to ONNX with their metadata,
 * and the render node loads and runs the files. The environment comes from render-node/training/setup.sh
 * (run by infra/setup-host.sh with PETSING_TEST_TOOLS=1).
 */
describe('training the pet-face model', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('training');
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('trains both networks on a few photos, exports them, and the render node runs the exported files', async () => {
    const train = await run(PYTHON, ['-m', 'petface.train', '--limit', '12', '--epochs', '1', '--landmark-epochs', '1', '--batch', '4', '--workers', '0', '--out', dir], {
      cwd: TRAINING,
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(train.stdout).toMatch(/12 photos loaded/);
    expect(train.stdout).toMatch(/epoch 1\/1 .*'centre'/);
    expect(train.stdout).toMatch(/epoch 1\/1 .*'heat'/);
    const models = join(dir, 'models');
    await run(PYTHON, ['-m', 'petface.export', '--checkpoints', dir, '--out', models], { cwd: TRAINING, maxBuffer: 16 * 1024 * 1024 });

    const detector = readOnnxMetadata(await readFile(join(models, 'petface-detector.onnx')));
    expect(detector).toMatchObject({ petsing_face_stage: 'detector', input_side: '256', classes: 'none,dog,cat,bird,rabbit,hamster,guinea_pig', min_pet_probability: '0.95' });
    const landmarks = readOnnxMetadata(await readFile(join(models, 'petface-landmarks.onnx')));
    expect(landmarks).toMatchObject({ petsing_face_stage: 'landmarks', landmarks: 'eye_left,eye_right,nose,mouth,chin', min_face_score: '0.5' });

    // The Python mirror of the service's detection, as train.sh runs it after the export.
    const evaluation = join(dir, 'evaluation.json');
    await run(PYTHON, ['-m', 'petface.evaluate', '--checkpoints', dir, '--limit', '4', '--out', evaluation], { cwd: TRAINING, maxBuffer: 16 * 1024 * 1024 });
    const report = JSON.parse(await readFile(evaluation, 'utf8')) as Record<string, { summary: { pets: number; none: number }; rows: unknown[] }>;
    expect(report.held_out!.rows).toHaveLength(4);
    expect(report.dev!.rows).toHaveLength(4);
    expect(report.dev!.summary.pets + report.dev!.summary.none).toBe(4);

    const model = await loadPetFaceModel({ files: { detector: join(models, 'petface-detector.onnx'), landmarks: join(models, 'petface-landmarks.onnx') } });
    try {
      const image = await decodeImage(join(PETS, 'cat-01.jpg'));
      // One epoch on twelve photos knows little: what is checked is that the files run and answer in shape.
      const found = await model.detect(image);
      if (!(found instanceof DetectionFailure)) {
        expect(found.eyes).toHaveLength(2);
        expect(found.species).toMatch(/^(dog|cat|bird|rabbit|hamster|guinea_pig)$/);
      }
      const around = await model.detectAround(image, [image.width / 2, image.height / 2], null);
      expect(around.mouth.every(Number.isFinite)).toBe(true);
      expect(around.view).toMatch(/^(frontal|three-quarter|profile)$/);
    } finally {
      await model.release();
    }
  }, 600_000);
});
