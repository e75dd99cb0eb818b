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
  /** onnxruntime's graph optimisations; default 'all' (`bench:providers` compares 'basic'). */
  graphOptimization?: 'basic' | 'all';
}

/** The execution providers a session is created with, in onnxruntime's order of preference: CUDA runs what it can, the CPU the rest. */
const PROVIDER_LISTS: Record<ExecutionProvider, Array<{ name: 'cuda'; deviceId: number } | 'cpu'>> = {
  cuda: [{ name: 'cuda', deviceId: 0 }, 'cpu'],
  cpu: ['cpu'],
};

/** The names of a provider list, as a session reports them (`providers` of `detect --json` and doctor). */
const providerNames = (provider: ExecutionProvider) => PROVIDER_LISTS[provider].map((entry) => (typeof entry === 'string' ? entry : entry.name));

function sessionOptions(provider: ExecutionProvider, request: SessionRequest): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: PROVIDER_LISTS[provider],
    graphOptimizationLevel: request.graphOptimization ?? 'all',
    // Errors only: shape-merge warnings on odd exports would flood worker logs; contract problems are reported by us.
    logSeverityLevel: 3,
    ...(request.intraOpThreads ? { intraOpNumThreads: request.intraOpThreads } : {}),
  };
}

/**
 * NVIDIA's libraries read this when they start in a process (cuBLAS 11 and cuDNN 8 on): `0` keeps their float32
 * matrix products and convolutions out of TF32 (10-bit mantissas), which otherwise moves the pet-face model's
 * landmarks away from the CPU's. onnxruntime's CUDA provider has its own switch (`use_tf32`, on by default), but
 * onnxruntime-node 1.30 hands a CUDA provider nothing but its deviceId (js/node/src/session_options_helper.cc
 * creates default OrtCUDAProviderOptionsV2 and sets device_id; no other key is read, and `extra` entries are
 * session settings, not provider options), so the variable is the only way to it from Node.
 */
const TF32_SWITCH = 'NVIDIA_TF32_OVERRIDE';

/**
 * TF32 off for the whole process before its first CUDA session loads those libraries, unless the operator set the
 * variable (any other value leaves TF32 to the libraries' defaults). Answers whether TF32 is off.
 */
function keepCudaOutOfTf32(): boolean {
  process.env[TF32_SWITCH] ??= '0';
  return process.env[TF32_SWITCH] === '0';
}

/** An onnxruntime session, the provider it runs on, and the provider list it was created with. */
export interface CreatedSession {
  session: ort.InferenceSession;
  provider: ExecutionProvider;
  providers: string[];
}

/** An onnxruntime session on the requested provider, with the node's rule for a CUDA that cannot load (never silent). */
export async function createSession(bytes: Uint8Array, request: SessionRequest): Promise<CreatedSession> {
  if (request.provider === 'cuda') {
    try {
      const tf32Off = keepCudaOutOfTf32();
      const session = await ort.InferenceSession.create(bytes, sessionOptions('cuda', request));
      request.logger.info(`${request.label} on CUDA`, { tf32: tf32Off ? 'off' : `left to the libraries (${TF32_SWITCH}=${process.env[TF32_SWITCH]})` });
      return { session, provider: 'cuda', providers: providerNames('cuda') };
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
    return { session: await ort.InferenceSession.create(bytes, sessionOptions('cpu', request)), provider: 'cpu', providers: providerNames('cpu') };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RenderError('model_contract', `onnxruntime could not load the ${request.label}: ${reason}`, 'Check that the file is a valid ONNX model for onnxruntime 1.30.', {
      cause: error,
    });
  }
}

/**
 * One inference on a blank input of `shape` (float32 zeros), right after a session loads: the first run of a
 * session allocates its memory and picks its kernels (on CUDA 1.3-2.0 s for the pet-face model), which must not
 * fall on a person's photo check or a render. Answers its milliseconds, for the load's log line.
 */
export async function warmUp(session: ort.InferenceSession, shape: number[]): Promise<number> {
  const started = performance.now();
  const values = new Float32Array(shape.reduce((product, side) => product * side, 1));
  await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', values, shape) });
  return performance.now() - started;
}
