/**
 * `npm run drill:faults [-- options]`: the fault drill of issue 34, as a new user's `npm start` would live through it.
 * `petsing start` on its embedded defaults in a fresh DATA_DIR; then, for each part in turn (the render worker, the
 * API process, the Temporal dev server, the supervisor itself), a few videos are created through /v1 (real pet
 * photos of ../shared/pets, template songs), the part is killed with SIGKILL while a render runs, and (for the
 * supervisor) `petsing start` is run again on the same DATA_DIR. Meanwhile GET /health is polled every 250 ms.
 * Every video must end completed, or failed and refunded; the ledger must show exactly one charge per video and a
 * refund for each failed one; every line the service wrote must be a JSON log line; the final Ctrl-C (SIGINT to the
 * process group, as a terminal sends it) must leave no process of the DATA_DIR running.
 *
 * Options: --videos N (3) creates per fault. Prints a table and exits 1 when an invariant breaks.
 */
import { readdir, readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cliUser, supervisedChildPid, videoState, type V1 } from '../support/embedded-service.ts';
import { logLineProblems } from '../support/log-capture.ts';
import { embeddedServiceEnv, isAlive, runPetsing, waitUntil, type PetsingProcess } from '../support/processes.ts';
import { printTable } from './stats.ts';

const { values: options } = parseArgs({ options: { videos: { type: 'string', default: '3' } } });
const videosPerFault = Number(options.videos);
const FAULTS = ['render worker', 'API process', 'Temporal dev server', 'supervisor'] as const;
type Fault = (typeof FAULTS)[number];
const PETS = join(import.meta.dirname, '..', '..', '..', 'shared', 'pets');

const dataDir = await mkdtemp(join(tmpdir(), 'petsing-fault-drill-'));
const { env, port } = await embeddedServiceEnv(dataDir, { RATE_LIMIT_WRITES_PER_MINUTE: '1000', RATE_LIMIT_READS_PER_MINUTE: '100000' });
const baseUrl = `http://127.0.0.1:${port}`;

const outputs: PetsingProcess[] = [];
const start = async () => {
  const service = runPetsing(['start'], env, { detached: true });
  outputs.push(service);
  await service.serving(baseUrl, 300_000);
  return service;
};

/** The pid of the part a fault kills. */
async function pidOf(fault: Fault, service: PetsingProcess): Promise<number> {
  const supervisor = service.child.pid!;
  const pid =
    fault === 'render worker' ? await supervisedChildPid(supervisor, 'worker', 'render')
    : fault === 'API process' ? await supervisedChildPid(supervisor, 'serve')
    : fault === 'Temporal dev server' ? Number((await readFile(join(dataDir, 'temporal-dev-server.pid'), 'utf8')).trim())
    : supervisor;
  if (!pid) throw new Error(`no ${fault} found`);
  return pid;
}

/** A checked photo of a real pet (the photos of ../shared/pets in turn) and a template video of it. */
let photoIndex = 0;
async function createVideo(api: V1, photos: string[]): Promise<string> {
  const name = photos[photoIndex++ % photos.length]!;
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(await readFile(join(PETS, name)))], { type: 'image/jpeg' }), name);
  const image = (await (await api('/v1/images', { method: 'POST', body: form })).json()) as { id: string; face: unknown };
  const created = await api('/v1/videos', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ template_id: String(1 + (photoIndex % 7)), image_id: image.id, ...(image.face ? {} : { face: { mouth: { x: 0.5, y: 0.6 } } }) }),
  });
  if (created.status !== 202) throw new Error(`POST /v1/videos answered ${created.status}: ${await created.text()}`);
  return ((await created.json()) as { id: string }).id;
}

/** Processes whose command line or environment names this drill's DATA_DIR (what a Ctrl-C must leave none of), by command line. */
async function leftovers(pids: number[]): Promise<string[]> {
  const found = new Set(pids.filter(isAlive));
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const environment = await readFile(`/proc/${entry}/environ`, 'utf8').catch(() => '');
    if (commandLine.includes(dataDir) || environment.includes(`DATA_DIR=${dataDir}\0`)) found.add(Number(entry));
  }
  found.delete(process.pid);
  return Promise.all([...found].map(async (pid) => `${pid} ${(await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '(gone)')).replaceAll('\0', ' ').slice(0, 120)}`));
}

const photos = (await readdir(PETS)).filter((name) => /^(cat|dog|bird|rabbit|hamster|guinea)/.test(name) && name.endsWith('.jpg'));
let service = await start();
// One account per fault, so that each ledger statement (its latest 20 entries) holds all of that fault's entries.
const credits = videosPerFault + 2;
const accounts = new Map<Fault, V1>();
for (const [index, fault] of FAULTS.entries()) accounts.set(fault, await cliUser(env, baseUrl, `drill-${index}@example.com`, credits));
const rows: string[][] = [];
const videos = new Map<Fault, string[]>();
const seenPids: number[] = [];

for (const fault of FAULTS) {
  const api = accounts.get(fault)!;
  const made: string[] = [];
  for (let i = 0; i < videosPerFault; i++) made.push(await createVideo(api, photos));
  videos.set(fault, made);
  await waitUntil('a render to run', async () => (await Promise.all(made.map((id) => videoState(api, id)))).some((video) => video.stage === 'rendering'), 120_000);
  const victim = await pidOf(fault, service);
  seenPids.push(victim);
  const killedAt = Date.now();
  process.kill(victim, 'SIGKILL');
  let healthFailures = 0;
  let healthChecks = 0;
  if (fault === 'supervisor') {
    await service.exited;
    // Its parts notice and stop; the next start waits for them and opens the same DATA_DIR.
    service = await start();
  }
  await waitUntil(`the videos of the ${fault} fault to end`, async () => {
    const health = await fetch(`${baseUrl}/health`).then((response) => response.status, () => 0);
    healthChecks++;
    if (health !== 200) healthFailures++;
    const states = await Promise.all(made.map((id) => videoState(api, id).catch(() => undefined)));
    return states.every((state) => state && (state.status === 'completed' || state.status === 'failed'));
  }, 600_000);
  const states = await Promise.all(made.map((id) => videoState(api, id)));
  rows.push([
    fault,
    String(made.length),
    String(states.filter((state) => state.status === 'completed').length),
    String(states.filter((state) => state.status === 'failed').length),
    `${healthFailures}/${healthChecks}`,
    `${((Date.now() - killedAt) / 1000).toFixed(1)} s`,
  ]);
}

// The ledger: one charge per video, a refund exactly for each failed one, and the balance that follows.
const problems: string[] = [];
let completed = 0;
let made = 0;
for (const fault of FAULTS) {
  const api = accounts.get(fault)!;
  const ids = videos.get(fault)!;
  const statuses = new Map(await Promise.all(ids.map(async (id) => [id, (await videoState(api, id)).status] as const)));
  const ledger = (await (await api('/v1/credits')).json()) as { balance: number; recent: { delta: number; reason: string; video_id: string | null }[] };
  for (const id of ids) {
    const entries = ledger.recent.filter((entry) => entry.video_id === id);
    const charges = entries.filter((entry) => entry.delta < 0).length;
    const refunds = entries.filter((entry) => entry.reason === 'refund').length;
    if (charges !== 1 || refunds !== (statuses.get(id) === 'failed' ? 1 : 0)) problems.push(`${fault}: video ${id} (${statuses.get(id)}): ${charges} charges, ${refunds} refunds`);
  }
  const done = [...statuses.values()].filter((status) => status === 'completed').length;
  if (ledger.balance !== credits - done) problems.push(`${fault}: balance ${ledger.balance}, expected ${credits - done}`);
  completed += done;
  made += ids.length;
}

// A Ctrl-C at the terminal: SIGINT to the whole foreground group.
const group = service.child.pid!;
seenPids.push(group, ...(await Promise.all(['render worker', 'API process', 'Temporal dev server'].map((fault) => pidOf(fault as Fault, service).catch(() => 0)))));
process.kill(-group, 'SIGINT');
const exitCode = await service.exited;
// The dev server's watchdog (a shell loop) looks once a second, so what is left is looked at for a few seconds.
let left = await leftovers(seenPids.filter((pid) => pid > 0));
for (let tries = 0; tries < 20 && left.length > 0; tries++) {
  await new Promise((resolve) => setTimeout(resolve, 250));
  left = await leftovers(seenPids.filter((pid) => pid > 0));
}
const logProblems = outputs.flatMap((output) => logLineProblems(output.output()));
const restarts = outputs.map((output) => (output.output().match(/exited unasked; starting it again/g) ?? []).length).reduce((a, b) => a + b, 0);

printTable(['fault (SIGKILL mid-render)', 'videos', 'completed', 'failed', '/health not 200', 'kill → all ended'], rows);
console.log(`\nvideos ${made}: ${completed} completed, ${made - completed} failed (${credits} credits granted to each of ${FAULTS.length} accounts)`);
console.log(`ledger: ${problems.length === 0 ? 'exact (one charge per video, one refund per failed video)' : problems.join('; ')}`);
console.log(`parts started again by the supervisor: ${restarts}; log lines that are not JSON log lines: ${logProblems.length}`);
console.log(`Ctrl-C: exit ${exitCode}; processes left 5 s later: ${left.length === 0 ? 'none' : left.join('; ')}`);
for (const problem of logProblems.slice(0, 10)) console.log(`  ${problem.slice(0, 300)}`);
const broken = problems.length > 0 || logProblems.length > 0 || left.length > 0 || exitCode !== 0;
await rm(dataDir, { recursive: true, force: true });
process.exit(broken ? 1 : 0);
