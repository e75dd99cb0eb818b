/**
 * CUDA execution-provider check for a GPU render node (no ffmpeg, no photo needed).
 *
 *   node --experimental-strip-types render-node/scripts/cuda-check.ts [--batches 50] [--batch-size 32] [--face-size 96,256]
 *   (or through tsx, or bundled with esbuild: see docs/benchmarks.md, "CUDA execution provider")
 *
 * For each face size it loads the generated lip-sync model twice through the render node's own loader
 * (loadLipSyncModel): once on the CPU and once with provider 'cuda' and cudaFallback 'refuse', so a CUDA
 * that cannot load ends the check with an error instead of quietly running on the CPU. It then runs the
 * same batches on both, prints the per-batch latency (model.run, host-to-device copies included) and the
 * largest difference between the outputs, and reads an onnxruntime profile to show which execution
 * provider ran each node. Exit status 0 only when CUDA loaded, ran every node and agreed with the CPU.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';
import { isRenderError } from '../src/errors.ts';
import { loadLipSyncModel, type ExecutionProvider, type LipSyncModel } from '../src/lipsync-model.ts';
import type { Logger } from '../src/logger.ts';
import { MEL_BANDS, MEL_WINDOW } from '../src/model-contract.ts';
import { ensureGeneratedModel } from '../src/model-generator.ts';

/** Outputs are 0-1 colours; float32 kernels on two devices may differ in the last bits only. */
const TOLERANCE = 1e-4;
const INPUT_POOL = 4;

const logger: Logger = {
  info: (message, fields) => console.log(`  info: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`),
  warn: (message, fields) => console.log(`  warn: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`),
  error: (message, fields) => console.log(`  error: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`),
};

/** Deterministic inputs: audio from loud to silent (-4..4), face crops of smooth gradients (0-1). */
function makeInputs(batchSize: number, faceSize: number, seed: number): { audio: Float32Array; face: Float32Array } {
  let state = (seed * 2654435761 + 1) >>> 0;
  const random = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const audio = new Float32Array(batchSize * MEL_BANDS * MEL_WINDOW).map(() => random() * 8 - 4);
  const plane = faceSize * faceSize;
  const face = new Float32Array(batchSize * 6 * plane);
  for (let n = 0; n < batchSize; n++) {
    for (let c = 0; c < 6; c++) {
      const offset = random();
      for (let i = 0; i < plane; i++) {
        const lowerHalf = Math.floor(i / faceSize) >= faceSize / 2;
        face[(n * 6 + c) * plane + i] = c < 3 && lowerHalf ? 0 : (offset + (i % faceSize) / faceSize) % 1;
      }
    }
  }
  return { audio, face };
}

function summary(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  return `median ${at(0.5).toFixed(2)} ms, p90 ${at(0.9).toFixed(2)} ms, mean ${mean.toFixed(2)} ms, min ${sorted[0]!.toFixed(2)} ms`;
}

/** Runs one batch in a profiled CUDA session and counts the nodes each execution provider ran. */
async function cudaNodePlacement(modelPath: string, batchSize: number, faceSize: number): Promise<Map<string, number>> {
  const dir = await mkdtemp(join(tmpdir(), 'petsing-cuda-profile-'));
  try {
    const session = await ort.InferenceSession.create(await readFile(modelPath), {
      executionProviders: [{ name: 'cuda', deviceId: 0 }],
      enableProfiling: true,
      profileFilePrefix: join(dir, 'profile'),
      logSeverityLevel: 3,
    });
    const { audio, face } = makeInputs(batchSize, faceSize, 0);
    const [audioName, faceName] = session.inputNames[0] === 'audio_sequences' ? session.inputNames : [...session.inputNames].reverse();
    await session.run({
      [audioName!]: new ort.Tensor('float32', audio, [batchSize, 1, MEL_BANDS, MEL_WINDOW]),
      [faceName!]: new ort.Tensor('float32', face, [batchSize, 6, faceSize, faceSize]),
    });
    session.endProfiling();
    await session.release();
    const file = (await readdir(dir)).find((name) => name.endsWith('.json'));
    if (!file) throw new Error('onnxruntime wrote no profile');
    const events = JSON.parse(await readFile(join(dir, file), 'utf8')) as Array<{ cat?: string; args?: { provider?: string } }>;
    const counts = new Map<string, number>();
    for (const event of events) {
      if (event.cat === 'Node' && event.args?.provider) counts.set(event.args.provider, (counts.get(event.args.provider) ?? 0) + 1);
    }
    return counts;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function checkFaceSize(faceSize: number, batches: number, batchSize: number): Promise<boolean> {
  const modelPath = await ensureGeneratedModel({ faceSize });
  console.log(`\n== generated model S=${faceSize}, batch ${batchSize}, ${batches} timed batches per provider ==`);
  const models: Partial<Record<ExecutionProvider, LipSyncModel>> = {};
  for (const provider of ['cpu', 'cuda'] as const) {
    const started = performance.now();
    models[provider] = await loadLipSyncModel({ modelPath, provider, cudaFallback: 'refuse', batchSize, logger });
    console.log(`  ${provider}: loaded on provider "${models[provider].provider}" in ${(performance.now() - started).toFixed(0)} ms (warm-up run included)`);
  }
  const cpu = models.cpu!;
  const cuda = models.cuda!;
  if (cuda.provider !== 'cuda') throw new Error(`CUDA model reports provider ${cuda.provider}`);

  const pool = Array.from({ length: INPUT_POOL }, (_, seed) => makeInputs(cpu.batchSize, faceSize, seed + 1));
  const times: Record<ExecutionProvider, number[]> = { cpu: [], cuda: [] };
  let maxDiff = 0;
  for (let batch = 0; batch < batches; batch++) {
    const { audio, face } = pool[batch % INPUT_POOL]!;
    const outputs: Float32Array[] = [];
    for (const model of [cpu, cuda]) {
      const started = performance.now();
      outputs.push(await model.run(audio, face));
      times[model.provider].push(performance.now() - started);
    }
    const [a, b] = outputs as [Float32Array, Float32Array];
    for (let i = 0; i < a.length; i++) maxDiff = Math.max(maxDiff, Math.abs(a[i]! - b[i]!));
    if (!Number.isFinite(maxDiff)) break;
  }
  await cpu.release();
  await cuda.release();

  const frames = cpu.batchSize;
  for (const provider of ['cpu', 'cuda'] as const) {
    const median = [...times[provider]].sort((x, y) => x - y)[Math.floor(times[provider].length / 2)]!;
    console.log(`  ${provider.padEnd(4)} per batch: ${summary(times[provider])} (${(median / frames).toFixed(3)} ms/frame at the median)`);
  }
  const agree = maxDiff <= TOLERANCE;
  console.log(`  max |cpu - cuda| over ${batches} batches: ${maxDiff.toExponential(2)} (${agree ? 'ok' : 'FAIL'}, tolerance ${TOLERANCE})`);

  const placement = await cudaNodePlacement(modelPath, frames, faceSize);
  const onCuda = placement.get('CUDAExecutionProvider') ?? 0;
  const elsewhere = [...placement].filter(([provider]) => provider !== 'CUDAExecutionProvider');
  console.log(`  node placement (onnxruntime profile, one run): ${[...placement].map(([p, n]) => `${p} ${n}`).join(', ') || 'no node events'}`);
  return agree && onCuda > 0 && elsewhere.length === 0;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      batches: { type: 'string', default: '50' },
      'batch-size': { type: 'string', default: '32' },
      'face-size': { type: 'string', default: '96' },
    },
  });
  const batches = Number(values.batches);
  const batchSize = Number(values['batch-size']);
  const faceSizes = values['face-size'].split(',').map(Number);
  console.log(`onnxruntime-node ${ort.env.versions.node}, node ${process.version}; backends: ${ort.listSupportedBackends().map((b) => b.name).join(', ')}`);
  let ok = true;
  for (const faceSize of faceSizes) ok = (await checkFaceSize(faceSize, batches, batchSize)) && ok;
  console.log(ok ? '\nCUDA check passed' : '\nCUDA check FAILED');
  return ok ? 0 : 1;
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(isRenderError(error) ? `error (${error.code}): ${error.message}\nhint: ${error.hint}` : error);
  process.exitCode = 1;
}
