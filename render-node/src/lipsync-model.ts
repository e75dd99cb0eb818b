import { readFile } from 'node:fs/promises';
import * as ort from 'onnxruntime-node';
import { RenderError } from './errors.ts';
import type { Logger } from './logger.ts';
import { bindModel, checkOutputDims, MEL_BANDS, MEL_WINDOW, type ModelBinding } from './model-contract.ts';
import { ensureGeneratedModel } from './model-generator.ts';
import { readOnnxMetadata } from './onnx-metadata.ts';
import { createSession, type ExecutionProvider } from './onnx-session.ts';

export type { ExecutionProvider };

export interface LoadLipSyncModelOptions {
  /** An ONNX file with the Wav2Lip contract; omitted: the bundled generated model. */
  modelPath?: string;
  provider: ExecutionProvider;
  /** What to do when CUDA cannot be used: run on the CPU (logged as a warning) or refuse to start. */
  cudaFallback: 'cpu' | 'refuse';
  logger: Logger;
  /** Frames per inference call; ignored when the export fixes N. */
  batchSize?: number;
  /** Threads onnxruntime may use; default: all cores (ffmpeg runs in its own process beside it). */
  intraOpThreads?: number;
}

export interface LipSyncModel {
  readonly source: string;
  readonly provider: ExecutionProvider;
  readonly faceSize: number;
  readonly batchSize: number;
  readonly binding: ModelBinding;
  readonly metadata: Record<string, string>;
  /**
   * Runs one batch: `audio` holds batchSize windows of 80×16, `face` batchSize crops of 6×S×S.
   * Returns batchSize×3×S×S values in 0-1.
   */
  run(audio: Float32Array, face: Float32Array): Promise<Float32Array>;
  release(): Promise<void>;
}

/** Loads, validates and warms a lip-sync model; call once per process before taking jobs. */
export async function loadLipSyncModel(options: LoadLipSyncModelOptions): Promise<LipSyncModel> {
  const started = performance.now();
  const source = options.modelPath ?? (await ensureGeneratedModel());
  let bytes: Uint8Array;
  try {
    bytes = await readFile(source);
  } catch (error) {
    throw new RenderError('model_load', `cannot read lip-sync model ${source}: ${(error as Error).message}`, 'Check RENDER_MODEL_PATH.', {
      cause: error,
      permanent: true,
    });
  }
  const metadata = readOnnxMetadata(bytes);
  const { session, provider } = await createSession(bytes, { ...options, label: 'lip-sync model' });

  let binding: ModelBinding;
  try {
    binding = bindModel(session.inputMetadata, session.outputMetadata, metadata);
  } catch (error) {
    await session.release();
    throw error;
  }
  const batchSize = binding.fixedBatch ?? options.batchSize ?? 32;
  const faceSize = binding.faceSize;
  const audioLength = batchSize * MEL_BANDS * MEL_WINDOW;
  const faceLength = batchSize * 6 * faceSize * faceSize;

  const run = async (audio: Float32Array, face: Float32Array): Promise<Float32Array> => {
    if (audio.length !== audioLength || face.length !== faceLength) {
      throw new Error(`batch buffers have ${audio.length}/${face.length} values, expected ${audioLength}/${faceLength}`);
    }
    const results = await session.run({
      [binding.audioInput]: new ort.Tensor('float32', audio, [batchSize, 1, MEL_BANDS, MEL_WINDOW]),
      [binding.faceInput]: new ort.Tensor('float32', face, [batchSize, 6, faceSize, faceSize]),
    });
    const output = results[binding.output];
    if (!output) throw new RenderError('model_contract', `lip-sync model returned no "${binding.output}"`, 'Check the model export.');
    checkOutputDims(output.dims, batchSize, faceSize, binding.output);
    if (!(output.data instanceof Float32Array)) throw new RenderError('model_contract', `output "${binding.output}" is ${output.type}, expected float32`, 'Check the model export.');
    return output.data;
  };

  try {
    // Warm-up: the first run allocates arenas and JIT-selects kernels; do it before the first job, and
    // it is also where a model whose declared shapes lie is caught.
    await run(new Float32Array(audioLength).fill(-4), new Float32Array(faceLength).fill(0.5));
  } catch (error) {
    await session.release();
    if (error instanceof RenderError) throw error;
    throw new RenderError('model_contract', `lip-sync model failed its warm-up run: ${(error as Error).message}`, 'Check the model export against the contract.', {
      cause: error,
    });
  }
  options.logger.info('lip-sync model ready', {
    source,
    provider,
    faceSize,
    batchSize,
    modelVersion: metadata.model_version,
    loadMs: Math.round(performance.now() - started),
  });

  return {
    source,
    provider,
    faceSize,
    batchSize,
    binding,
    metadata,
    run,
    release: () => session.release(),
  };
}
