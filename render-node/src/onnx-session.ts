import * as ort from 'onnxruntime-node';
import './onnx-telemetry.ts';
import { RenderError } from './errors.ts';
import type { Logger } from './logger.ts';

export type ExecutionProvider = 'cpu' | 'cuda';

export interface SessionRequest {
  provider: ExecutionProvider;
  /** What to do when CUDA cannot be used: run on the CPU (logged as a warning) or refuse to start. */
  cudaFallback: 'cpu' | 'refuse';
  logger: Logger;
  /** Threads onnxruntime may use; default: all cores. */
  intraOpThreads?: number;
  /** What the session is, for messages ("lip-sync model", "pet-face detector"). */
  label: string;
}

function sessionOptions(provider: ExecutionProvider, threads: number | undefined): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: provider === 'cuda' ? [{ name: 'cuda', deviceId: 0 }] : ['cpu'],
    graphOptimizationLevel: 'all',
    // Errors only: shape-merge warnings on odd exports would flood worker logs; contract problems are reported by us.
    logSeverityLevel: 3,
    ...(threads ? { intraOpNumThreads: threads } : {}),
  };
}

/** An onnxruntime session on the requested provider, with the node's rule for a CUDA that cannot load (never silent). */
export async function createSession(bytes: Uint8Array, request: SessionRequest): Promise<{ session: ort.InferenceSession; provider: ExecutionProvider }> {
  if (request.provider === 'cuda') {
    try {
      return { session: await ort.InferenceSession.create(bytes, sessionOptions('cuda', request.intraOpThreads)), provider: 'cuda' };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (request.cudaFallback === 'refuse') {
        request.logger.error(`CUDA execution provider unavailable for the ${request.label}; refusing to start (RENDER_CUDA_FALLBACK=refuse)`, { reason });
        throw new RenderError(
          'provider_unavailable',
          `CUDA execution provider could not be loaded: ${reason}`,
          'Put the CUDA provider of onnxruntime 1.30 (onnxruntime-gpu wheel, CUDA 13 + cuDNN 9) next to libonnxruntime.so.1 (render-node/README.md, "CUDA"), or set RENDER_CUDA_FALLBACK=cpu.',
          { cause: error },
        );
      }
      request.logger.warn(`CUDA execution provider unavailable for the ${request.label}; falling back to CPU (RENDER_CUDA_FALLBACK=cpu)`, { reason });
    }
  }
  try {
    return { session: await ort.InferenceSession.create(bytes, sessionOptions('cpu', request.intraOpThreads)), provider: 'cpu' };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RenderError('model_contract', `onnxruntime could not load the ${request.label}: ${reason}`, 'Check that the file is a valid ONNX model for onnxruntime 1.30.', {
      cause: error,
    });
  }
}
