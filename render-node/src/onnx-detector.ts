import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { RenderError } from './errors.ts';
import type { RgbImage } from './image-decoder.ts';
import type { MouthDetector, MouthRegion } from './mouth-detector.ts';

/**
 * An optional learned detector (RENDER_DETECTOR_MODEL_PATH). Contract, documented in the README:
 *   input  [1,3,D,D] float32, RGB 0-1, the photo letterboxed (centred, grey padding) into D×D
 *   output [1,4] float32: score 0-1, mouth centre x, upper-lip y, face width, all as fractions of D
 * An animal-face or animal-keypoint model is adapted to this with a few post-processing nodes at export.
 */
export async function loadOnnxMouthDetector(path: string, options: { minScore?: number } = {}): Promise<MouthDetector> {
  const session = await ort.InferenceSession.create(path, { executionProviders: ['cpu'] }).catch((error: Error) => {
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

  return {
    name: `onnx:${path}`,
    async detect(image: RgbImage): Promise<MouthRegion | null> {
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
      const values = result[outputName]?.data as Float32Array | undefined;
      if (!values || values.length < 4) throw new RenderError('model_contract', 'detector output must hold 4 values', 'See render-node/README.md, "Detector".');
      const [score, x, y, faceWidth] = [values[0]!, values[1]!, values[2]!, values[3]!];
      if (!(score >= minScore) || !(faceWidth > 0)) return null;
      const toImage = (v: number, pad: number) => (v * side - pad) / scale;
      const face = (faceWidth * side) / scale;
      const centreX = toImage(x, padLeft);
      const upperLipY = toImage(y, padTop);
      return {
        centreX,
        upperLipY,
        faceWidth: face,
        subject: { left: centreX - face / 2, top: upperLipY - face * 0.8, width: face, height: face * 1.1 },
        confidence: score,
        method: `onnx detector ${path}`,
      };
    },
  };
}
