import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderError } from '../src/errors.ts';
import { loadLipSyncModel } from '../src/lipsync-model.ts';
import { buildLipSyncModel, ensureGeneratedModel, MOUTH_GEOMETRY } from '../src/model-generator.ts';
import { encodeOnnxModel, int64Tensor, type OnnxModel, type OnnxValueInfo } from '../src/onnx-writer.ts';
import { readOnnxMetadata } from '../src/onnx-metadata.ts';
import { tempDir, testLogger } from './helpers.ts';

let dir: string;
beforeAll(async () => {
  dir = await tempDir('model');
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const S = 96;

async function runGenerated(audioValue: (band: number, column: number) => number, face: Float32Array) {
  const session = await ort.InferenceSession.create(buildLipSyncModel());
  const audio = new Float32Array(80 * 16);
  for (let b = 0; b < 80; b++) for (let c = 0; c < 16; c++) audio[b * 16 + c] = audioValue(b, c);
  const result = await session.run({
    audio_sequences: new ort.Tensor('float32', audio, [1, 1, 80, 16]),
    face_sequences: new ort.Tensor('float32', face, [1, 6, S, S]),
  });
  await session.release();
  return result.generated!.data as Float32Array;
}

/** A face input whose reference crop is a smooth colour ramp (so pass-through would be detectable). */
function rampFace(): Float32Array {
  const face = new Float32Array(6 * S * S);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < S * S; i++) {
      const value = 0.3 + 0.4 * ((i % S) / S) + 0.1 * c;
      face[(3 + c) * S * S + i] = value;
      face[c * S * S + i] = Math.floor(i / S) < S / 2 ? value : 0;
    }
  }
  return face;
}

function changedPixels(output: Float32Array, face: Float32Array): number {
  let changed = 0;
  for (let i = 0; i < S * S; i++) if (Math.abs(output[i]! - face[3 * S * S + i]!) > 0.02) changed++;
  return changed;
}

describe('generated lip-sync model', () => {
  it('is deterministic, byte for byte', () => {
    expect(buildLipSyncModel().equals(buildLipSyncModel())).toBe(true);
    expect(buildLipSyncModel({ faceSize: 128 }).equals(buildLipSyncModel())).toBe(false);
    expect(readOnnxMetadata(buildLipSyncModel()).face_size).toBe('96');
  });

  it('leaves the reference unchanged on silence and opens the mouth with loudness', async () => {
    const face = rampFace();
    const silent = await runGenerated(() => -4, face);
    expect(changedPixels(silent, face)).toBe(0);
    const quiet = await runGenerated(() => -0.5, face);
    const loud = await runGenerated((band) => (band < 40 ? 2.5 : -1), face);
    const quietArea = changedPixels(quiet, face);
    const loudArea = changedPixels(loud, face);
    expect(quietArea).toBeGreaterThan(20);
    expect(loudArea).toBeGreaterThan(quietArea * 1.5);
    // The change is in the mouth region, not anywhere else.
    const row = Math.floor((MOUTH_GEOMETRY.upperLipY + MOUTH_GEOMETRY.halfHeight) * S);
    const column = Math.floor(MOUTH_GEOMETRY.centreX * S);
    expect(loud[row * S + column]!).toBeLessThan(face[3 * S * S + row * S + column]! - 0.2);
    expect(loud[10 * S + 10]).toBeCloseTo(face[3 * S * S + 10 * S + 10]!, 5);
  });

  it('depends on the face input too (no fixed picture)', async () => {
    const face = rampFace();
    const dark = rampFace().map((v) => v * 0.5);
    const a = await runGenerated(() => 1, face);
    const b = await runGenerated(() => 1, dark);
    expect(Math.abs(a[5 * S + 5]! - b[5 * S + 5]!)).toBeGreaterThan(0.1);
  });

  it('is cached once and loads through the contract check', async () => {
    const path = await ensureGeneratedModel({ cacheDir: dir });
    expect(await ensureGeneratedModel({ cacheDir: dir })).toBe(path);
    const model = await loadLipSyncModel({ modelPath: path, provider: 'cpu', cudaFallback: 'refuse', logger: testLogger, batchSize: 4 });
    expect([model.faceSize, model.batchSize, model.binding.audioInput, model.binding.faceInput]).toEqual([96, 4, 'audio_sequences', 'face_sequences']);
    await model.release();
  });
});

/** A tiny model that slices the reference out of the face input, with declared shapes as given. */
function sliceModel(audio: OnnxValueInfo, face: OnnxValueInfo, output: OnnxValueInfo, pool = false): Buffer {
  const model: OnnxModel = {
    graphName: 'broken',
    producer: 'test',
    opset: 13,
    metadata: {},
    inputs: [audio, face],
    outputs: [output],
    initializers: [int64Tensor('start', [3]), int64Tensor('end', [6]), int64Tensor('axis', [1])],
    nodes: [
      { op: 'Slice', inputs: [face.name, 'start', 'end', 'axis'], outputs: [pool ? 'sliced' : output.name] },
      ...(pool
        ? [{ op: 'MaxPool', inputs: ['sliced'], outputs: [output.name], attributes: [{ name: 'kernel_shape', kind: 'ints' as const, value: [2, 2] }, { name: 'strides', kind: 'ints' as const, value: [2, 2] }] }]
        : []),
    ],
  };
  return encodeOnnxModel(model);
}

describe('model contract', () => {
  async function refusal(bytes: Buffer): Promise<RenderError> {
    const path = join(dir, `broken-${Math.random().toString(36).slice(2)}.onnx`);
    await writeFile(path, bytes);
    const error = await loadLipSyncModel({ modelPath: path, provider: 'cpu', cudaFallback: 'refuse', logger: testLogger }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RenderError);
    expect((error as RenderError).code).toBe('model_contract');
    return error as RenderError;
  }

  it('accepts a well-formed model with other input names and order', async () => {
    const bytes = sliceModel({ name: 'mel', shape: ['N', 1, 80, 16] }, { name: 'img', shape: ['N', 6, 64, 64] }, { name: 'out', shape: ['N', 3, 64, 64] });
    const path = join(dir, 'ok.onnx');
    await writeFile(path, bytes);
    const model = await loadLipSyncModel({ modelPath: path, provider: 'cpu', cudaFallback: 'refuse', logger: testLogger, batchSize: 2 });
    expect([model.binding.audioInput, model.binding.faceInput, model.faceSize]).toEqual(['mel', 'img', 64]);
    await model.release();
  });

  it('refuses 40 mel bands, naming the mismatch', async () => {
    const error = await refusal(sliceModel({ name: 'mel', shape: ['N', 1, 40, 16] }, { name: 'face', shape: ['N', 6, 96, 96] }, { name: 'out', shape: ['N', 3, 96, 96] }));
    expect(error.message).toContain('40 mel bands');
    expect(error.permanent).toBe(true);
  });

  it('refuses a face input with 3 channels', async () => {
    const error = await refusal(
      sliceModel({ name: 'audio_sequences', shape: ['N', 1, 80, 16] }, { name: 'face_sequences', shape: ['N', 3, 96, 96] }, { name: 'out', shape: ['N', 3, 96, 96] }),
    );
    expect(error.message).toMatch(/face input "face_sequences" has 3 channels/);
  });

  it('refuses an output whose size differs from the face input', async () => {
    const error = await refusal(
      sliceModel({ name: 'audio', shape: ['N', 1, 80, 16] }, { name: 'face', shape: ['N', 6, 96, 96] }, { name: 'out', shape: ['N', 3, 48, 48] }, true),
    );
    expect(error.message).toContain('[N,3,48,48]');
    expect(error.message).toContain('S=96');
  });

  it('refuses a file that is not an ONNX model', async () => {
    const error = await refusal(Buffer.from('definitely not protobuf'));
    expect(error.message).toMatch(/could not load/);
  });
});

describe('optional ONNX detector', () => {
  it('maps its letterboxed landmarks back to photo pixels and drops low scores', async () => {
    const { floatTensor } = await import('../src/onnx-writer.ts');
    const { loadOnnxFaceDetector } = await import('../src/onnx-detector.ts');
    // score = 10 × mean brightness (clipped), then fixed landmarks (fractions of D): eyes, nose, mouth,
    // chin, mouth corners (the second one negative: not visible), head box.
    const landmarks = [0.4, 0.4, 0.6, 0.4, 0.5, 0.5, 0.5, 0.6, 0.5, 0.7, 0.45, 0.6, -1, -1, 0.3, 0.3, 0.4, 0.5];
    const bytes = encodeOnnxModel({
      graphName: 'detector',
      producer: 'test',
      opset: 13,
      metadata: {},
      inputs: [{ name: 'image', shape: [1, 3, 64, 64] }],
      outputs: [{ name: 'face', shape: [1, 19] }],
      initializers: [floatTensor('ten', [], [10]), floatTensor('zero', [], [0]), floatTensor('one', [], [1]), floatTensor('points', [1, 18], landmarks)],
      nodes: [
        { op: 'ReduceMean', inputs: ['image'], outputs: ['mean'], attributes: [{ name: 'axes', kind: 'ints', value: [2, 3] }, { name: 'keepdims', kind: 'int', value: 0 }] },
        { op: 'ReduceMean', inputs: ['mean'], outputs: ['brightness'], attributes: [{ name: 'axes', kind: 'ints', value: [1] }, { name: 'keepdims', kind: 'int', value: 1 }] },
        { op: 'Mul', inputs: ['brightness', 'ten'], outputs: ['raw_score'] },
        { op: 'Clip', inputs: ['raw_score', 'zero', 'one'], outputs: ['score'] },
        { op: 'Concat', inputs: ['score', 'points'], outputs: ['face'], attributes: [{ name: 'axis', kind: 'int', value: 1 }] },
      ],
    });
    const path = join(dir, 'detector.onnx');
    await writeFile(path, bytes);
    const detector = await loadOnnxFaceDetector(path);
    const bright = { width: 200, height: 100, data: Buffer.alloc(200 * 100 * 3, 200) };
    const found = await detector.detect(bright);
    if (!('mouth' in found)) throw new Error(`no face: ${found.reason}`);
    // 200×100 letterboxed into 64×64: scale 0.32, 16 px of padding above.
    const toY = (v: number) => (v * 64 - 16) / 0.32;
    expect(found.mouth[0]).toBeCloseTo(100, 3);
    expect(found.mouth[1]).toBeCloseTo(toY(0.6), 3);
    expect(found.eyes[0][0]).toBeCloseTo(80, 3);
    expect(found.chin[1]).toBeCloseTo(toY(0.7), 3);
    expect(found.mouthCorners).toBeNull();
    expect(found.head.width).toBeCloseTo(0.4 * 200, 3);
    // A square black photo needs no letterbox padding, so the score is 0: no face.
    const dark = { width: 100, height: 100, data: Buffer.alloc(100 * 100 * 3, 0) };
    expect('reason' in (await detector.detect(dark))).toBe(true);
  });
});
