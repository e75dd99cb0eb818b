/**
 * `npm run bench:check [-- --rounds N]`: how long the photo check (POST /v1/images) takes on embedded
 * defaults, the way a person meets it: `petsing start` in a fresh DATA_DIR (PGlite, the local object store,
 * the Temporal dev server, the API, both workers and the render node in one process tree), an API key from
 * the CLI, then every photo of ../shared/pets uploaded in turn, first with the node idle, then while the node
 * renders a video (its one render slot taken). See docs/benchmarks.md (## Photo check).
 * Goal (issue 22): within 1 s, and never behind a render.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { freePort, waitFor } from '../support/processes.ts';
import { ms, percentile, printTable } from './stats.ts';

const { values: options } = parseArgs({ options: { rounds: { type: 'string', default: '2' } } });
const ROUNDS = Number(options.rounds);
const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', '..', 'control-plane', 'bin', 'petsing.mjs');
const pets = join(import.meta.dirname, '..', '..', '..', 'shared', 'pets');
const TYPES: Record<string, string> = { '.jpg': 'image/jpeg', '.png': 'image/png' };

const dataDir = await mkdtemp(join(tmpdir(), 'petsing-check-bench-'));
const port = await freePort();
const baseUrl = `http://localhost:${port}`;
const env = {
  PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn',
  TEMPORAL_DEV_PORT: String(await freePort()), TEMPORAL_DEV_UI_PORT: String(await freePort()),
  // Every photo of ../shared/pets, twice per round: more than a person's write limit a minute.
  RATE_LIMIT_WRITES_PER_MINUTE: '1000',
};
const service = spawn(process.execPath, [cli, 'start'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
try {
  await waitFor('GET /health', async () => (await fetch(`${baseUrl}/health`).catch(() => undefined))?.ok === true, 180_000);
  const petsing = async (...args: string[]) => JSON.parse((await run(process.execPath, [cli, '--json', ...args], { env })).stdout);
  await petsing('users', 'create', '--email', 'bench@example.com');
  await petsing('credits', 'grant', '--user', 'bench@example.com', '--amount', '5');
  const { key } = await petsing('api-keys', 'create', '--user', 'bench@example.com', '--scopes', 'videos:read,videos:write');
  const photos = await Promise.all(
    (await readdir(pets)).filter((name) => TYPES[extname(name)]).sort().map(async (name) => ({ name, body: await readFile(join(pets, name)) })),
  );

  const check = async (photo: (typeof photos)[number]) => {
    const form = new FormData();
    form.append('image', new Blob([photo.body], { type: TYPES[extname(photo.name)] }), photo.name);
    const started = performance.now();
    const response = await fetch(`${baseUrl}/v1/images`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: form });
    const body = (await response.json()) as { id: string; face: { species?: string } | null; error?: { code: string } };
    if (response.status !== 201) throw new Error(`${photo.name}: ${response.status} ${JSON.stringify(body)}`);
    return { ms: performance.now() - started, body };
  };
  const measure = async (label: string, busy?: () => Promise<boolean>) => {
    const times: number[] = [];
    let duringRender = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const photo of photos) {
        times.push((await check(photo)).ms);
        if (busy && (await busy())) duringRender++;
      }
    }
    return { label, times, duringRender };
  };

  // The first check of a process loads nothing more (the node loads its model at start), but warms the paths.
  const first = await check(photos[0]!);
  const idle = await measure('node idle');
  // A template video from a checked photo: its render takes the node's only render slot.
  const video = await fetch(`${baseUrl}/v1/videos`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ template_id: '1', image_id: first.body.id, aspect: '9:16' }),
  }).then((response) => response.json() as Promise<{ id: string }>);
  const status = async () => ((await (await fetch(`${baseUrl}/v1/videos/${video.id}`, { headers: { Authorization: `Bearer ${key}` } })).json()) as { status: string }).status;
  await waitFor('the render to start', async () => (await status()) === 'processing', 120_000);
  const busy = await measure('node rendering', async () => (await status()) === 'processing');

  console.log(`POST /v1/images on embedded defaults (petsing start), ${photos.length} photos of ../shared/pets × ${ROUNDS} rounds`);
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load average ${loadavg()[0]!.toFixed(2)}\n`);
  printTable(
    ['while', 'checks', 'median', 'p90', 'max', 'answered while rendering'],
    [idle, busy].map((row) => [row.label, String(row.times.length), ms(percentile(row.times, 50)), ms(percentile(row.times, 90)), ms(Math.max(...row.times)), row.label === 'node idle' ? '-' : `${row.duringRender}/${row.times.length}`]),
  );
} finally {
  service.kill('SIGTERM');
  await new Promise((resolve) => service.once('exit', resolve));
  await rm(dataDir, { recursive: true, force: true });
}
