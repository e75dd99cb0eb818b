import type { InferenceSession } from 'onnxruntime-node';
import { RenderError } from './errors.ts';

/**
 * The Wav2Lip-style interface every lip-sync model must have (README, "Model contract"):
 *   audio  [N,1,80,16] float32   a 16-column log-mel window
 *   face   [N,6,S,S]   float32   masked crop ++ reference crop, 0-1
 *   output [N,3,S,S]   float32   generated crop, 0-1
 * Inputs are told apart by shape; names only break ties.
 */

export const MEL_BANDS = 80;
export const MEL_WINDOW = 16;

const AUDIO_ALIASES = ['audio_sequences', 'audio', 'mel', 'mels', 'mel_batch', 'audio_batch', 'indiv_mels'];
const FACE_ALIASES = ['face_sequences', 'face', 'faces', 'img_batch', 'video', 'image', 'x'];

export interface ModelBinding {
  audioInput: string;
  faceInput: string;
  output: string;
  faceSize: number;
  /** Fixed batch size baked into the export, or undefined when N is symbolic. */
  fixedBatch: number | undefined;
}

type Dim = number | string;

function describe(shape: readonly Dim[]): string {
  return `[${shape.join(',')}]`;
}

function fixed(dim: Dim | undefined): number | undefined {
  return typeof dim === 'number' && dim > 0 ? dim : undefined;
}

function contractError(message: string): RenderError {
  return new RenderError(
    'model_contract',
    `lip-sync model breaks the contract: ${message}`,
    'Export the model with audio [N,1,80,16], face [N,6,S,S] and output [N,3,S,S] float32 tensors (see render-node/README.md).',
  );
}

interface TensorInfo {
  name: string;
  shape: readonly Dim[];
}

function tensorInfo(metadata: InferenceSession.ValueMetadata, role: string): TensorInfo {
  if (!metadata.isTensor) throw contractError(`${role} "${metadata.name}" is not a tensor`);
  if (metadata.type !== 'float32') throw contractError(`${role} "${metadata.name}" is ${metadata.type}, expected float32`);
  return { name: metadata.name, shape: metadata.shape };
}

function looksLikeAudio(shape: readonly Dim[]): boolean {
  return shape.length === 4 && fixed(shape[1]) === 1 && fixed(shape[2]) === MEL_BANDS && fixed(shape[3]) === MEL_WINDOW;
}

function looksLikeFace(shape: readonly Dim[]): boolean {
  return shape.length === 4 && fixed(shape[1]) === 6;
}

/** Decides which input is which and reads S; throws model_contract naming the first mismatch. */
export function bindModel(
  inputs: readonly InferenceSession.ValueMetadata[],
  outputs: readonly InferenceSession.ValueMetadata[],
  customMetadata: Record<string, string> = {},
): ModelBinding {
  if (inputs.length !== 2) {
    throw contractError(`expected 2 inputs (audio [N,1,80,16] and face [N,6,S,S]), found ${inputs.length}: ${inputs.map((i) => i.name).join(', ')}`);
  }
  if (outputs.length < 1) throw contractError('the model has no output');
  const [first, second] = inputs.map((input, index) => tensorInfo(input, `input ${index}`)) as [TensorInfo, TensorInfo];

  let audio: TensorInfo | undefined;
  let face: TensorInfo | undefined;
  if (looksLikeAudio(first.shape) && looksLikeFace(second.shape)) [audio, face] = [first, second];
  else if (looksLikeAudio(second.shape) && looksLikeFace(first.shape)) [audio, face] = [second, first];
  else {
    // Shapes alone did not settle it (symbolic dims); fall back on the common export names.
    audio = [first, second].find((t) => AUDIO_ALIASES.includes(t.name.toLowerCase()));
    face = [first, second].find((t) => t !== audio && FACE_ALIASES.includes(t.name.toLowerCase()));
    if (!audio || !face) {
      throw contractError(
        `cannot tell the audio input from the face input: "${first.name}" ${describe(first.shape)} and "${second.name}" ${describe(second.shape)}; expected one [N,1,80,16] and one [N,6,S,S]`,
      );
    }
  }

  const audioShape = audio.shape;
  if (audioShape.length !== 4) throw contractError(`audio input "${audio.name}" has rank ${audioShape.length} ${describe(audioShape)}, expected [N,1,80,16]`);
  const expectedAudio: Array<[number, number, string]> = [
    [1, 1, 'channels'],
    [2, MEL_BANDS, 'mel bands'],
    [3, MEL_WINDOW, 'mel columns'],
  ];
  for (const [axis, want, label] of expectedAudio) {
    const got = audioShape[axis];
    if (typeof got === 'number' && got !== want) {
      throw contractError(`audio input "${audio.name}" has ${got} ${label} (axis ${axis}) in ${describe(audioShape)}, expected ${want}`);
    }
  }

  const faceShape = face.shape;
  if (faceShape.length !== 4) throw contractError(`face input "${face.name}" has rank ${faceShape.length} ${describe(faceShape)}, expected [N,6,S,S]`);
  if (typeof faceShape[1] === 'number' && faceShape[1] !== 6) {
    throw contractError(`face input "${face.name}" has ${faceShape[1]} channels in ${describe(faceShape)}, expected 6 (masked crop + reference crop)`);
  }
  const height = fixed(faceShape[2]);
  const width = fixed(faceShape[3]);
  if (height !== undefined && width !== undefined && height !== width) {
    throw contractError(`face input "${face.name}" is not square: ${describe(faceShape)}`);
  }
  const metadataSize = Number(customMetadata.face_size ?? customMetadata.img_size);
  const faceSize = height ?? width ?? (Number.isInteger(metadataSize) && metadataSize > 0 ? metadataSize : undefined);
  if (faceSize === undefined) {
    throw contractError(`face input "${face.name}" ${describe(faceShape)} has a symbolic size and the model metadata has no face_size entry`);
  }
  if (faceSize < 32 || faceSize > 1024) throw contractError(`face size S=${faceSize} is outside 32..1024`);

  const output = tensorInfo(outputs[0]!, 'output 0');
  const outShape = output.shape;
  if (outShape.length !== 4) throw contractError(`output "${output.name}" has rank ${outShape.length} ${describe(outShape)}, expected [N,3,${faceSize},${faceSize}]`);
  if (typeof outShape[1] === 'number' && outShape[1] !== 3) {
    throw contractError(`output "${output.name}" has ${outShape[1]} channels in ${describe(outShape)}, expected 3`);
  }
  for (const axis of [2, 3]) {
    const got = outShape[axis];
    if (typeof got === 'number' && got !== faceSize) {
      throw contractError(`output "${output.name}" is ${describe(outShape)} but the face input has S=${faceSize}; expected [N,3,${faceSize},${faceSize}]`);
    }
  }

  const audioBatch = fixed(audioShape[0]);
  const faceBatch = fixed(faceShape[0]);
  if (audioBatch !== undefined && faceBatch !== undefined && audioBatch !== faceBatch) {
    throw contractError(`audio batch ${audioBatch} differs from face batch ${faceBatch}`);
  }
  return { audioInput: audio.name, faceInput: face.name, output: output.name, faceSize, fixedBatch: audioBatch ?? faceBatch };
}

/** Checks what a run actually returned; some exports declare no output shape at all. */
export function checkOutputDims(dims: readonly number[], batch: number, faceSize: number, outputName: string): void {
  const expected = [batch, 3, faceSize, faceSize];
  if (dims.length !== 4 || dims.some((d, i) => d !== expected[i])) {
    throw contractError(`output "${outputName}" came back as ${describe(dims)}, expected ${describe(expected)}`);
  }
}
