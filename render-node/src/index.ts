export { renderNodeEnvSchema, parseRenderNodeEnv, MAX_OUTPUT_SIZE, type RenderNodeEnv } from './config.ts';
export { RenderError, isRenderError, type RenderErrorCode } from './errors.ts';
export type { Logger } from './logger.ts';
export { loadLipSyncModel, type LipSyncModel, type LoadLipSyncModelOptions, type ExecutionProvider } from './lipsync-model.ts';
export { renderVideo, prepareJob, type RenderVideoOptions, type RenderResult, type StageTimings } from './render-pipeline.ts';
export { renderSamplePet } from './sample-pet.ts';
export { buildLipSyncModel, ensureGeneratedModel, GENERATED_MODEL_VERSION } from './model-generator.ts';
export { heuristicMouthDetector, type MouthDetector, type MouthRegion } from './mouth-detector.ts';
export { loadOnnxMouthDetector } from './onnx-detector.ts';
