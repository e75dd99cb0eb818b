/**
 * npm run bench:providers [-- --pets DIR] [--petfaces DIR] [--limit N]
 *
 * How far the pet-face model's answers move with where and how onnxruntime runs it. The photo check's detection
 * (the photo decoded at up to 1,536 px a side, as `detectFace` does) of every photo of the held-out split of
 * ../shared/petfaces (render-node/models/held-out.txt, never trained on) and of ../shared/pets, under each
 * configuration below, compared face by face with the reference, the CPU at the service's settings: for the faces
 * both found, the largest landmark difference (eyes, nose, mouth, chin) as a share of the reference face's
 * eyes-to-chin length, its median and maximum, and how many faces move more than 0.05 and 0.35 (the detection
 * benchmark's tolerance); photos where one found a face and the other none; and disagreements on species, view and
 * mouth_open. With each configuration, its load (the warm-up run included), its first detection and its median.
 *
 *   cpu            the reference: the render node's CPU session (graph optimisations 'all', up to 4 threads)
 *   cpu-1-thread   the same with one intra-op thread
 *   cpu-basic      the same with graph optimisations 'basic' (no fused kernels)
 *   cuda           the render node's CUDA session: TF32 off (NVIDIA_TF32_OVERRIDE=0, onnx-session.ts)
 *   cuda-tf32      CUDA with TF32 left to the libraries (NVIDIA_TF32_OVERRIDE=1), what a node without the switch ran
 *
 * Each configuration runs in a process of its own (NVIDIA's libraries read NVIDIA_TF32_OVERRIDE once per process).
 * Where CUDA cannot load (no GPU, or no CUDA provider next to onnxruntime: render-node/README.md, "CUDA") the run
 * says "CUDA not available" with onnxruntime's reason and compares the CPU configurations alone.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { availableParallelism, cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { z } from 'zod';
import { isRenderError } from '../src/errors.ts';
import { decodeImage } from '../src/image-decoder.ts';
import { loadPetFaceModel, type LoadPetFaceModelOptions } from '../src/pet-face-model.ts';
import { CHECK_MAX_SIDE, DetectionFailure, faceLength, scaleFace, type Point } from '../src/pet-face.ts';

const CONFIGURATIONS: Record<string, { options: LoadPetFaceModelOptions; env?: Record<string, string> }> = {
  cpu: { options: { provider: 'cpu' } },
  'cpu-1-thread': { options: { provider: 'cpu', intraOpThreads: 1 } },
  'cpu-basic': { options: { provider: 'cpu', graphOptimization: 'basic' } },
  cuda: { options: { provider: 'cuda', cudaFallback: 'refuse' } },
  'cuda-tf32': { options: { provider: 'cuda', cudaFallback: 'refuse' }, env: { NVIDIA_TF32_OVERRIDE: '1' } },
};
const REFERENCE = 'cpu';
/** A landmark this far off (in eyes-to-chin lengths) is a visible difference; 0.35 is the detection benchmark's miss. */
const NOTICEABLE = 0.05;
const MISS = 0.35;

const { values } = parseArgs({
  options: {
    pets: { type: 'string' },
    petfaces: { type: 'string' },
    limit: { type: 'string' },
    /** Internal: run one configuration and print its detections as JSON. */
    child: { type: 'string' },
  },
});
const shared = join(import.meta.dirname, '../../../shared');
const petsDir = resolve(values.pets ?? join(shared, 'pets'));
const petfacesDir = resolve(values.petfaces ?? join(shared, 'petfaces'));

const Detection = z.object({
  set: z.enum(['held-out', 'development']),
  file: z.string(),
  /** Eyes (left, right), nose, mouth, chin in the photo's pixels; null: no face. */
  points: z.array(z.tuple([z.number(), z.number()])).length(5).nullable(),
  species: z.string().optional(),
  view: z.string().optional(),
  mouthOpen: z.boolean().optional(),
  ms: z.number(),
});
type Detection = z.infer<typeof Detection>;
const ChildAnswer = z.union([
  z.object({ unavailable: z.string() }),
  z.object({ providers: z.array(z.string()), loadMs: z.number(), detections: z.array(Detection) }),
]);
type ChildAnswer = z.infer<typeof ChildAnswer>;

async function photos(): Promise<Array<{ set: Detection['set']; file: string; path: string }>> {
  const heldOut = (await readFile(join(import.meta.dirname, '../models/held-out.txt'), 'utf8')).split('\n').filter(Boolean);
  const development = Object.keys(JSON.parse(await readFile(join(petsDir, 'landmarks.json'), 'utf8')) as Record<string, unknown>);
  // --limit: the first N of each set (a quick try).
  const first = <T>(list: T[]) => (values.limit ? list.slice(0, Number(values.limit)) : list);
  return [
    ...first(heldOut).map((file) => ({ set: 'held-out' as const, file, path: join(petfacesDir, 'images', file) })),
    ...first(development).map((file) => ({ set: 'development' as const, file, path: join(petsDir, file) })),
  ];
}

/** One configuration, in this process: every photo as the photo check decodes and detects it. */
async function runChild(name: string): Promise<ChildAnswer> {
  const started = performance.now();
  let model;
  try {
    model = await loadPetFaceModel({ ...CONFIGURATIONS[name]!.options, logger: { info: () => {}, warn: () => {}, error: () => {} } });
  } catch (error) {
    if (isRenderError(error) && error.code === 'provider_unavailable') return { unavailable: error.message };
    throw error;
  }
  const loadMs = performance.now() - started;
  const detections: Detection[] = [];
  for (const photo of await photos()) {
    const image = await decodeImage(photo.path, CHECK_MAX_SIDE);
    const mark = performance.now();
    const found = await model.detect(image);
    const ms = performance.now() - mark;
    const face = found instanceof DetectionFailure ? null : scaleFace(found, image.orientedWidth / image.width);
    detections.push({
      set: photo.set,
      file: photo.file,
      points: face ? [face.eyes[0], face.eyes[1], face.nose, face.mouth, face.chin] : null,
      ...(face?.species ? { species: face.species } : {}),
      ...(face?.view ? { view: face.view } : {}),
      ...(face?.mouthOpen === undefined ? {} : { mouthOpen: face.mouthOpen }),
      ms,
    });
  }
  await model.release();
  return { providers: model.providers, loadMs, detections };
}

const run = promisify(execFile);

async function runConfiguration(name: string): Promise<ChildAnswer> {
  const { stdout } = await run(process.execPath, [...process.execArgv, import.meta.filename, ...process.argv.slice(2), '--child', name], {
    env: { ...process.env, ...CONFIGURATIONS[name]!.env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return ChildAnswer.parse(JSON.parse(stdout));
}

/** A share of a face length: exponent notation below a thousandth, where float rounding differences live. */
const share = (value: number) => (value === 0 ? '0' : value < 1e-3 ? value.toExponential(1) : value.toFixed(3));

const percentile = (list: number[], p: number) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(p * list.length))] ?? NaN;

/** The largest landmark distance between two detections of one face, in eyes-to-chin lengths of the reference. */
function landmarkDifference(reference: Point[], other: Point[]): number {
  const unit = faceLength({ eyes: [reference[0]!, reference[1]!], chin: reference[4]! });
  return Math.max(...reference.map((p, i) => Math.hypot(p[0] - other[i]![0], p[1] - other[i]![1]))) / unit;
}

function compare(label: string, reference: Detection[], other: Detection[]): void {
  const pairs = reference.map((r, i) => [r, other[i]!] as const);
  const both = pairs.filter(([r, o]) => r.points && o.points);
  const differences = both.map(([r, o]) => landmarkDifference(r.points!, o.points!));
  const onlyOne = pairs.filter(([r, o]) => (r.points === null) !== (o.points === null)).length;
  const disagree = (key: 'species' | 'view' | 'mouthOpen') => both.filter(([r, o]) => r[key] !== o[key]).length;
  const worst = both.map(([r], i) => ({ file: r.file, difference: differences[i]! })).sort((a, b) => b.difference - a.difference)[0];
  console.log(
    `  ${label.padEnd(12)} faces found by both ${String(both.length).padStart(3)}; largest landmark difference: median ${share(percentile(differences, 0.5))}, max ${share(Math.max(0, ...differences))}` +
      `${worst && worst.difference > 0 ? ` (${worst.file})` : ''}; over ${NOTICEABLE}: ${differences.filter((d) => d > NOTICEABLE).length}, over ${MISS}: ${differences.filter((d) => d > MISS).length};` +
      ` face found by one only: ${onlyOne}; species ${disagree('species')}, view ${disagree('view')}, mouth_open ${disagree('mouthOpen')} disagree`,
  );
}

if (values.child) {
  process.stdout.write(JSON.stringify(await runChild(values.child)));
} else {
  console.log(`pet-face model on the CPU and (where it loads) CUDA, compared face by face with '${REFERENCE}'`);
  console.log(`machine: ${availableParallelism()} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}`);
  const answers: Record<string, Extract<ChildAnswer, { detections: unknown }>> = {};
  for (const name of Object.keys(CONFIGURATIONS)) {
    const answer = await runConfiguration(name);
    if ('unavailable' in answer) {
      console.log(`${name}: CUDA not available (${answer.unavailable.split('\n')[0]})`);
      continue;
    }
    answers[name] = answer;
    const times = answer.detections.map((d) => d.ms);
    console.log(`${name}: providers ${answer.providers.join(', ')}; loaded and warmed up in ${answer.loadMs.toFixed(0)} ms; first detection ${times[0]!.toFixed(0)} ms, median ${percentile(times, 0.5).toFixed(0)} ms, p90 ${percentile(times, 0.9).toFixed(0)} ms (${times.length} photos)`);
  }
  const reference = answers[REFERENCE]!;
  for (const set of ['held-out', 'development'] as const) {
    const inSet = (answer: typeof reference) => answer.detections.filter((d) => d.set === set);
    console.log(`\n${set === 'held-out' ? `held-out split of ${petfacesDir}` : `development set ${petsDir}`} (${inSet(reference).length} photos), against ${REFERENCE}:`);
    for (const [name, answer] of Object.entries(answers)) if (name !== REFERENCE) compare(name, inSet(reference), inSet(answer));
  }
  if (!answers.cuda) console.log('\nCUDA was not measured: run `npm run bench:providers` on a node where `RENDER_EXECUTION_PROVIDER=cuda npx render-node doctor` passes.');
}
