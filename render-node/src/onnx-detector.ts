import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as ort from 'onnxruntime-node';
import './onnx-telemetry.ts';
import sharp from 'sharp';
import { RenderError } from './errors.ts';
import type { Logger } from './logger.ts';
import { warmUp } from './onnx-session.ts';
import type { RgbImage } from './image-decoder.ts';
import { DetectionFailure, type FaceDetector, type PetFace, type Point } from './pet-face.ts';

/** Values in the detector's output row: score, 2 eyes, nose, mouth, chin, 2 mouth corners (x,y each), head box. */
const DETECTOR_OUTPUT_LENGTH = 1 + 2 * 7 + 4;

/**
 * An optional learned detector (RENDER_DETECTOR_MODEL_PATH). Contract, documented in the README:
 *   input  [1,3,D,D] float32, RGB 0-1, the photo letterboxed (centred, grey padding) into D×D
 *   output [1,19] float32, coordinates as fractions of D:
 *     score 0-1, left eye x,y, right eye x,y, nose x,y, mouth x,y, chin x,y,
 *     mouth corner 1 x,y, mouth corner 2 x,y (negative when not visible), head left, top, width, height
 * A pet-keypoint model is adapted to this with a few post-processing nodes at export.
 */
export async function loadOnnxFaceDetector(path: string, options: { minScore?: number; logger?: Logger } = {}): Promise<FaceDetector> {
  const bytes = await readFile(path).catch((error: Error) => {
    throw new RenderError('model_load', `cannot read the detector model ${path}: ${error.message}`, 'Check RENDER_DETECTOR_MODEL_PATH.', { cause: error });
  });
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['cpu'] }).catch((error: Error) => {
    throw new RenderError('model_contract', `cannot load the detector model ${path}: ${error.message}`, 'Check RENDER_DETECTOR_MODEL_PATH.', { cause: error });
  });
  const input = session.inputMetadata[0];
  const shape = input?.isTensor ? input.shape : [];
  const side = shape[2];
  if (session.inputMetadata.length !== 1 || !input || shape.length !== 4 || shape[1] !== 3 || typeof side !== 'number' || side !== shape[3]) {
    throw new RenderError('model_contract', `detector input must be [1,3,D,D], got [${shape.join(',')}]`, 'See render-node/README.md, "Detector".');
  }
  const outputName = session.outputNames[0]!;
  const minScore = options.minScore ?? 0.5;
  const warmUpMs = await warmUp(session, [1, 3, side, side]).catch((error: Error) => {
    throw new RenderError('model_contract', `the detector model ${path} failed its warm-up run: ${error.message}`, 'See render-node/README.md, "Detector".', { cause: error });
  });
  const version = `onnx:${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}`;
  options.logger?.info('custom face detector ready', { path, version, warmUpMs: Math.round(warmUpMs) });

  return {
    name: `onnx:${path}`,
    version,
    async detect(image: RgbImage): Promise<PetFace | DetectionFailure> {
      const scale = side / Math.max(image.width, image.height);
      const width = Math.max(1, Math.round(image.width * scale));
      const height = Math.max(1, Math.round(image.height * scale));
      const padLeft = Math.floor((side - width) / 2);
      const padTop = Math.floor((side - height) / 2);
      const { data } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
        .resize(width, height)
        .extend({ left: padLeft, top: padTop, right: side - width - padLeft, bottom: side - height - padTop, background: { r: 128, g: 128, b: 128 } })
        .raw()
        .toBuffer({ resolveWithObject: true });
      const plane = side * side;
      const tensor = new Float32Array(3 * plane);
      for (let i = 0; i < plane; i++) for (let c = 0; c < 3; c++) tensor[c * plane + i] = data[i * 3 + c]! / 255;
      const result = await session.run({ [input.name]: new ort.Tensor('float32', tensor, [1, 3, side, side]) });
      const v = result[outputName]?.data as Float32Array | undefined;
      if (!v || v.length < DETECTOR_OUTPUT_LENGTH) {
        throw new RenderError('model_contract', `detector output must hold ${DETECTOR_OUTPUT_LENGTH} values`, 'See render-node/README.md, "Detector".');
      }
      const score = v[0]!;
      if (!(score >= minScore)) return new DetectionFailure(`the detector model's score ${score.toFixed(2)} is below ${minScore}`);
      const point = (i: number): Point => [(v[i]! * side - padLeft) / scale, (v[i + 1]! * side - padTop) / scale];
      const cornersVisible = [11, 12, 13, 14].every((i) => v[i]! >= 0);
      return {
        confidence: Math.min(1, score),
        eyes: [point(1), point(3)],
        nose: point(5),
        mouth: point(7),
        chin: point(9),
        mouthCorners: cornersVisible ? [point(11), point(13)] : null,
        head: { left: (v[15]! * side - padLeft) / scale, top: (v[16]! * side - padTop) / scale, width: (v[17]! * side) / scale, height: (v[18]! * side) / scale },
        method: `onnx detector ${path}`,
      };
    },
  };
}
