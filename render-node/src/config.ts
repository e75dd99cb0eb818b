import { z } from 'zod';

/** 1080 × 1920 is the largest frame social video uses. */
export const MAX_OUTPUT_SIZE = 1080;

/**
 * Environment settings of a render node. The lead composes this into the worker's config;
 * every key has a default so a bare `npx render-node render` works on a laptop.
 */
export const renderNodeEnvSchema = z.object({
  /** A learned lip-sync model: a local file path or an object-store key (the worker downloads keys before calling loadLipSyncModel). Empty: the face rig. */
  RENDER_MODEL_PATH: z.string().trim().optional().transform((value) => (value ? value : undefined)),
  RENDER_EXECUTION_PROVIDER: z.enum(['cpu', 'cuda']).default('cpu'),
  RENDER_CUDA_FALLBACK: z.enum(['cpu', 'refuse']).default('refuse'),
  /** Output width; the height follows the video's aspect. Even, because H.264 yuv420p halves the chroma planes. */
  RENDER_OUTPUT_SIZE: z.coerce.number().int().min(128).max(MAX_OUTPUT_SIZE).multipleOf(2).default(720),
  RENDER_FPS: z.coerce.number().int().min(1).max(60).default(25),
  RENDER_BATCH_SIZE: z.coerce.number().int().min(1).max(512).default(32),
  /** Worker threads drawing the face rig; 0 draws on the render loop. Unset: defaultRigThreads() (0 on 2 cores). */
  RENDER_RIG_THREADS: z.coerce.number().int().min(0).max(32).optional(),
  /** Optional ONNX mouth/face detector (see README, "Detector"). */
  RENDER_DETECTOR_MODEL_PATH: z.string().trim().optional().transform((value) => (value ? value : undefined)),
});

export type RenderNodeEnv = z.infer<typeof renderNodeEnvSchema>;

export function parseRenderNodeEnv(env: Record<string, string | undefined> = process.env): RenderNodeEnv {
  return renderNodeEnvSchema.parse(env);
}
